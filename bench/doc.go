// See main.go for the command's documentation.
package main
