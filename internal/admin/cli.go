package admin

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/linkslot/linkslot/internal/catalogfile"
)

// ErrUsage wraps command-line mistakes (unknown command, bad flags); the
// caller prints the message and exits with status 2.
var ErrUsage = errors.New("usage")

// CLIUsage describes the subcommands RunCLI implements.
const CLIUsage = `Administration commands:
  clients create --id ID --name NAME --redirect-uri URI [--redirect-uri URI ...] [--public]
                 [--allowed-scopes "openid bookings:read"] [--default-scopes "..."]
                 [--grant-types "authorization_code refresh_token"] [--logo-url URL] [--contact TEXT]
  clients list
  clients show ID
  clients update ID [--name ...] [--redirect-uri ...] [--allowed-scopes ...] [--default-scopes ...]
                 [--grant-types ...] [--logo-url ...] [--contact ...]
  clients disable ID | enable ID | delete ID | rotate-secret ID
  users create --email EMAIL --password-stdin [--admin]
  users set-admin --email EMAIL [--admin=false]
  catalog import FILE [--format yaml|json]     (FILE "-" reads standard input)
  catalog export [--format yaml|json]
  audit list [--limit N] [--offset N]
Every command accepts --json for machine-readable output.
A confidential client's secret is printed once, by create and rotate-secret.`

func usageErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, a...))
}

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, " ") }
func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// splitList splits "a b,c" into [a b c].
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' || r == '\n' })
}

// cliCmd parses one subcommand's flags, accepting a positional argument
// before or after them.
type cliCmd struct {
	fs      *flag.FlagSet
	jsonOut bool
	args    []string
	set     map[string]bool
}

func newCmd(name string) *cliCmd {
	c := &cliCmd{fs: flag.NewFlagSet(name, flag.ContinueOnError), set: map[string]bool{}}
	c.fs.SetOutput(io.Discard)
	c.fs.BoolVar(&c.jsonOut, "json", false, "print JSON")
	return c
}

func (c *cliCmd) parse(args []string) error {
	var lead []string
	for len(args) > 0 && (!strings.HasPrefix(args[0], "-") || args[0] == "-") {
		lead = append(lead, args[0])
		args = args[1:]
	}
	if err := c.fs.Parse(args); err != nil {
		return usageErr("%s: %v", c.fs.Name(), err)
	}
	c.args = append(lead, c.fs.Args()...)
	c.fs.Visit(func(f *flag.Flag) { c.set[f.Name] = true })
	return nil
}

func (c *cliCmd) one(what string) (string, error) {
	if len(c.args) != 1 {
		return "", usageErr("%s: give exactly one %s", c.fs.Name(), what)
	}
	return c.args[0], nil
}

func (c *cliCmd) none() error {
	if len(c.args) != 0 {
		return usageErr("%s: unexpected argument %q", c.fs.Name(), c.args[0])
	}
	return nil
}

// RunCLI runs one administration command (see CLIUsage) as ActorCLI. args
// start after the program's own, e.g. ["clients", "list"]. Mistakes in the
// command line wrap ErrUsage; refused inputs are *InvalidError.
func RunCLI(ctx context.Context, svc *Service, args []string, stdin io.Reader, stdout io.Writer) error {
	a := Actor{ID: ActorCLI}
	if len(args) < 2 {
		return usageErr("expected a command\n%s", CLIUsage)
	}
	group, verb, rest := args[0], args[1], args[2:]
	switch group + " " + verb {
	case "clients create":
		return cliClientCreate(ctx, svc, a, rest, stdout)
	case "clients list":
		return cliClientList(ctx, svc, rest, stdout)
	case "clients show":
		c := newCmd("clients show")
		if err := c.parse(rest); err != nil {
			return err
		}
		id, err := c.one("client id")
		if err != nil {
			return err
		}
		info, err := svc.GetClient(ctx, id)
		if err != nil {
			return err
		}
		return printClient(stdout, c.jsonOut, info, "")
	case "clients update":
		return cliClientUpdate(ctx, svc, a, rest, stdout)
	case "clients disable", "clients enable":
		c := newCmd(group + " " + verb)
		if err := c.parse(rest); err != nil {
			return err
		}
		id, err := c.one("client id")
		if err != nil {
			return err
		}
		info, err := svc.SetClientDisabled(ctx, a, id, verb == "disable")
		if err != nil {
			return err
		}
		if c.jsonOut {
			return writeJSON(stdout, info)
		}
		_, err = fmt.Fprintf(stdout, "Client %s %sd.\n", id, verb)
		return err
	case "clients delete":
		c := newCmd("clients delete")
		if err := c.parse(rest); err != nil {
			return err
		}
		id, err := c.one("client id")
		if err != nil {
			return err
		}
		if err := svc.DeleteClient(ctx, a, id); err != nil {
			return err
		}
		if c.jsonOut {
			return writeJSON(stdout, map[string]any{"deleted": id})
		}
		_, err = fmt.Fprintf(stdout, "Client %s deleted, with its links and tokens.\n", id)
		return err
	case "clients rotate-secret":
		c := newCmd("clients rotate-secret")
		if err := c.parse(rest); err != nil {
			return err
		}
		id, err := c.one("client id")
		if err != nil {
			return err
		}
		cc, err := svc.RotateClientSecret(ctx, a, id)
		if err != nil {
			return err
		}
		return printClient(stdout, c.jsonOut, cc.Client, cc.Secret)
	case "users create":
		return cliUserCreate(ctx, svc, a, rest, stdin, stdout)
	case "users set-admin":
		c := newCmd("users set-admin")
		email := c.fs.String("email", "", "account email")
		admin := c.fs.Bool("admin", true, "grant (true) or remove (false) the admin role")
		if err := c.parse(rest); err != nil {
			return err
		}
		if *email == "" && len(c.args) == 1 {
			*email = c.args[0]
		} else if err := c.none(); err != nil {
			return err
		}
		if *email == "" {
			return usageErr("users set-admin: --email is required")
		}
		info, err := svc.SetAdmin(ctx, a, *email, *admin)
		if err != nil {
			return err
		}
		if c.jsonOut {
			return writeJSON(stdout, info)
		}
		state := "is now an administrator"
		if !info.Admin {
			state = "is no longer an administrator"
		}
		_, err = fmt.Fprintf(stdout, "%s %s.\n", info.Email, state)
		return err
	case "catalog import":
		return cliCatalogImport(ctx, svc, a, rest, stdin, stdout)
	case "catalog export":
		c := newCmd("catalog export")
		format := c.fs.String("format", "yaml", "yaml or json")
		if err := c.parse(rest); err != nil {
			return err
		}
		if err := c.none(); err != nil {
			return err
		}
		if c.jsonOut {
			*format = "json"
		}
		data, err := svc.ExportCatalog(ctx, a, *format)
		if err != nil {
			return err
		}
		_, err = stdout.Write(data)
		return err
	case "audit list":
		c := newCmd("audit list")
		limit := c.fs.Int("limit", 50, "events to show (1-200)")
		offset := c.fs.Int("offset", 0, "events to skip")
		if err := c.parse(rest); err != nil {
			return err
		}
		if err := c.none(); err != nil {
			return err
		}
		evs, more, err := svc.ListAudit(ctx, *limit, *offset)
		if err != nil {
			return err
		}
		if c.jsonOut {
			return writeJSON(stdout, map[string]any{"events": evs, "has_more": more})
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TIME\tACTOR\tACTION\tTARGET")
		for _, e := range evs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.CreatedAt.Format("2006-01-02 15:04:05Z"), e.ActorID, e.Action, e.Target)
		}
		return tw.Flush()
	}
	return usageErr("unknown command %q\n%s", group+" "+verb, CLIUsage)
}

func clientFlags(c *cliCmd) (name, logo, contact, allowed, defaults, grants *string, redirects *listFlag) {
	redirects = &listFlag{}
	name = c.fs.String("name", "", "display name shown on the consent page")
	c.fs.Var(redirects, "redirect-uri", "redirect URI (repeatable)")
	allowed = c.fs.String("allowed-scopes", "", "scopes the client may be granted (space or comma separated)")
	defaults = c.fs.String("default-scopes", "", "scopes granted when the client asks only for openid")
	grants = c.fs.String("grant-types", "", "authorization_code and/or refresh_token (default both)")
	logo = c.fs.String("logo-url", "", "https URL of the client's logo")
	contact = c.fs.String("contact", "", "who to contact about the client")
	return
}

func cliClientCreate(ctx context.Context, svc *Service, a Actor, args []string, out io.Writer) error {
	c := newCmd("clients create")
	id := c.fs.String("id", "", "client id")
	public := c.fs.Bool("public", false, "a public client (no secret; PKCE only)")
	name, logo, contact, allowed, defaults, grants, redirects := clientFlags(c)
	if err := c.parse(args); err != nil {
		return err
	}
	if *id == "" && len(c.args) == 1 {
		*id = c.args[0]
	} else if err := c.none(); err != nil {
		return err
	}
	cc, err := svc.CreateClient(ctx, a, ClientSpec{ID: *id, Name: *name, Public: *public, RedirectURIs: *redirects,
		AllowedScopes: splitList(*allowed), DefaultScopes: splitList(*defaults), GrantTypes: splitList(*grants),
		LogoURL: *logo, Contact: *contact})
	if err != nil {
		return err
	}
	return printClient(out, c.jsonOut, cc.Client, cc.Secret)
}

func cliClientUpdate(ctx context.Context, svc *Service, a Actor, args []string, out io.Writer) error {
	c := newCmd("clients update")
	name, logo, contact, allowed, defaults, grants, redirects := clientFlags(c)
	if err := c.parse(args); err != nil {
		return err
	}
	id, err := c.one("client id")
	if err != nil {
		return err
	}
	var p ClientPatch
	if c.set["name"] {
		p.Name = name
	}
	if c.set["redirect-uri"] {
		r := []string(*redirects)
		p.RedirectURIs = &r
	}
	list := func(flag string, v *string) *[]string {
		if !c.set[flag] {
			return nil
		}
		l := splitList(*v)
		return &l
	}
	p.AllowedScopes, p.DefaultScopes, p.GrantTypes = list("allowed-scopes", allowed), list("default-scopes", defaults), list("grant-types", grants)
	if c.set["logo-url"] {
		p.LogoURL = logo
	}
	if c.set["contact"] {
		p.Contact = contact
	}
	info, err := svc.UpdateClient(ctx, a, id, p)
	if err != nil {
		return err
	}
	return printClient(out, c.jsonOut, info, "")
}

func cliClientList(ctx context.Context, svc *Service, args []string, out io.Writer) error {
	c := newCmd("clients list")
	if err := c.parse(args); err != nil {
		return err
	}
	if err := c.none(); err != nil {
		return err
	}
	cs, err := svc.ListClients(ctx)
	if err != nil {
		return err
	}
	if c.jsonOut {
		return writeJSON(out, map[string]any{"clients": cs})
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tTYPE\tSTATUS\tREDIRECT URIS")
	for _, ci := range cs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", ci.ID, ci.Name, clientType(ci), clientStatus(ci), strings.Join(ci.RedirectURIs, " "))
	}
	return tw.Flush()
}

func clientType(c ClientInfo) string {
	if c.Public {
		return "public"
	}
	return "confidential"
}

func clientStatus(c ClientInfo) string {
	if c.Disabled {
		return "disabled"
	}
	return "active"
}

// printClient prints a client and, when secret is set, the one-time secret.
func printClient(out io.Writer, asJSON bool, c ClientInfo, secret string) error {
	if asJSON {
		v := struct {
			Client ClientInfo `json:"client"`
			Secret string     `json:"client_secret,omitempty"`
		}{c, secret}
		return writeJSON(out, v)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Client ID:\t%s\n", c.ID)
	fmt.Fprintf(tw, "Name:\t%s\n", c.Name)
	fmt.Fprintf(tw, "Type:\t%s\n", clientType(c))
	fmt.Fprintf(tw, "Status:\t%s\n", clientStatus(c))
	fmt.Fprintf(tw, "Redirect URIs:\t%s\n", strings.Join(c.RedirectURIs, " "))
	fmt.Fprintf(tw, "Allowed scopes:\t%s\n", strings.Join(c.AllowedScopes, " "))
	fmt.Fprintf(tw, "Default scopes:\t%s\n", strings.Join(c.DefaultScopes, " "))
	fmt.Fprintf(tw, "Grant types:\t%s\n", strings.Join(c.GrantTypes, " "))
	if c.LogoURL != "" {
		fmt.Fprintf(tw, "Logo URL:\t%s\n", c.LogoURL)
	}
	if c.Contact != "" {
		fmt.Fprintf(tw, "Contact:\t%s\n", c.Contact)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if secret != "" {
		_, err := fmt.Fprintf(out, "\nClient secret (shown only this once; store it now):\n%s\n", secret)
		return err
	}
	return nil
}

func cliUserCreate(ctx context.Context, svc *Service, a Actor, args []string, stdin io.Reader, out io.Writer) error {
	c := newCmd("users create")
	email := c.fs.String("email", "", "account email")
	pwStdin := c.fs.Bool("password-stdin", false, "read the password from the first line of standard input")
	admin := c.fs.Bool("admin", false, "make the account an administrator")
	if err := c.parse(args); err != nil {
		return err
	}
	if err := c.none(); err != nil {
		return err
	}
	if *email == "" {
		return usageErr("users create: --email is required")
	}
	if !*pwStdin {
		return usageErr("users create: --password-stdin is required (passwords are never taken from the command line)")
	}
	line, err := bufio.NewReader(io.LimitReader(stdin, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read password: %w", err)
	}
	pw := strings.TrimRight(line, "\r\n")
	info, err := svc.CreateUser(ctx, a, *email, pw, *admin)
	if err != nil {
		return err
	}
	if c.jsonOut {
		return writeJSON(out, info)
	}
	role := "account"
	if info.Admin {
		role = "administrator account"
	}
	_, err = fmt.Fprintf(out, "Created %s %s (%s).\n", role, info.Email, info.ID)
	return err
}

func cliCatalogImport(ctx context.Context, svc *Service, a Actor, args []string, stdin io.Reader, out io.Writer) error {
	c := newCmd("catalog import")
	format := c.fs.String("format", "", "yaml or json (default: from the file name)")
	if err := c.parse(args); err != nil {
		return err
	}
	file, err := c.one("file (or - for standard input)")
	if err != nil {
		return err
	}
	var data []byte
	if file == "-" {
		data, err = io.ReadAll(io.LimitReader(stdin, catalogfile.MaxFileBytes+1))
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return fmt.Errorf("read catalog: %w", err)
	}
	if *format == "" {
		*format = strings.TrimPrefix(filepath.Ext(file), ".")
		if catalogfile.NormalizeFormat(*format) == "" {
			*format = "yaml" // JSON is YAML too, near enough; paths still point at the problem
		}
	}
	refs, err := svc.ImportCatalog(ctx, a, data, *format)
	if err != nil {
		return err
	}
	if c.jsonOut {
		return writeJSON(out, map[string]any{"imported": refs})
	}
	_, err = fmt.Fprintf(out, "Imported %d business(es): %s\n", len(refs), strings.Join(refs, ", "))
	return err
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
