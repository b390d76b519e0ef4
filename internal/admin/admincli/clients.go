package admincli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/cmdline"
	"github.com/linkslot/linkslot/internal/textout"
)

func clientsCmd(env Env) *cobra.Command {
	return group("clients", "Register and manage OAuth clients",
		clientCreateCmd(env), clientRegisterURLCmd(env), clientListCmd(env), clientShowCmd(env), clientUpdateCmd(env),
		clientSetDisabledCmd(env, "disable"), clientSetDisabledCmd(env, "enable"),
		clientDeleteCmd(env), clientRotateSecretCmd(env))
}

// clientFlags are the fields create and update share.
type clientFlags struct {
	name, logo, contact, allowed, defaults, grants, idTokenAlg string
	redirects                                                  []string
}

func (f *clientFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.name, "name", "", "display name shown on the consent page")
	fs.StringArrayVar(&f.redirects, "redirect-uri", nil, "redirect URI (repeatable)")
	fs.StringVar(&f.allowed, "allowed-scopes", "", "scopes the client may be granted (space or comma separated)")
	fs.StringVar(&f.defaults, "default-scopes", "", "scopes granted when the client asks only for openid")
	fs.StringVar(&f.grants, "grant-types", "", "authorization_code and/or refresh_token (default both)")
	fs.StringVar(&f.logo, "logo-url", "", "https URL of the client's logo")
	fs.StringVar(&f.contact, "contact", "", "who to contact about the client")
	fs.StringVar(&f.idTokenAlg, "id-token-alg", "", "RS256 or ES256: how the client's ID tokens are signed (default: LINKSLOT_ID_TOKEN_ALG; \"\" on update returns to it)")
	_ = cmd.RegisterFlagCompletionFunc("id-token-alg", cmdline.Values("ES256", "RS256"))
}

func clientCreateCmd(env Env) *cobra.Command {
	var f clientFlags
	var id string
	var public bool
	cmd := &cobra.Command{
		Use:   "create --id ID --name NAME --redirect-uri URI [--redirect-uri URI ...] [flags]",
		Short: "Register a client (a confidential client's secret is printed once)",
		Args:  cmdline.MaxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := flagOrArg(cmd, args, &id); err != nil {
				return err
			}
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			cc, err := svc.CreateClient(cmd.Context(), actor, admin.ClientSpec{ID: id, Name: f.name, Public: public,
				RedirectURIs: f.redirects, AllowedScopes: splitList(f.allowed), DefaultScopes: splitList(f.defaults),
				GrantTypes: splitList(f.grants), LogoURL: f.logo, Contact: f.contact, IDTokenAlg: f.idTokenAlg})
			if err != nil {
				return err
			}
			return printClient(cmd.OutOrStdout(), jsonOut(cmd), cc.Client, cc.Secret)
		},
	}
	cmd.Flags().StringVar(&id, "id", "", "client id")
	cmd.Flags().BoolVar(&public, "public", false, "a public client (no secret; PKCE only)")
	f.register(cmd)
	return cmd
}

func clientRegisterURLCmd(env Env) *cobra.Command {
	var allowed, defaults, pin string
	cmd := &cobra.Command{
		Use:   "register-url URL [--allowed-scopes \"…\"] [--default-scopes \"…\"] [--pin FILE]",
		Short: "Register a client by the URL of its client ID metadata document",
		Long: "Register a client whose client_id is the https URL of its client ID metadata document " +
			"(Claude, ChatGPT, VS Code, Goose …). The document is fetched and checked now; with --pin FILE " +
			"the file's copy is used instead of fetching it, for hosts that refuse fetches from data centres. " +
			"Without --allowed-scopes the client may be granted " + strings.Join(admin.DefaultURLAllowed, " ") +
			"; without --default-scopes it gets " + strings.Join(admin.DefaultURLDefaults, " ") + ".",
		Args: cmdline.ExactArgs(1, "the client id URL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var doc []byte
			if pin != "" {
				b, err := os.ReadFile(pin)
				if err != nil {
					return fmt.Errorf("read the pinned document: %w", err)
				}
				doc = b
			}
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			info, err := svc.RegisterURLClient(cmd.Context(), actor, admin.URLClientSpec{URL: args[0],
				AllowedScopes: splitList(allowed), DefaultScopes: splitList(defaults), Pin: doc})
			if err != nil {
				return err
			}
			return printClient(cmd.OutOrStdout(), jsonOut(cmd), info, "")
		},
	}
	cmd.Flags().StringVar(&allowed, "allowed-scopes", "", "scopes the client may be granted (space or comma separated)")
	cmd.Flags().StringVar(&defaults, "default-scopes", "", "scopes granted when the client asks only for openid")
	cmd.Flags().StringVar(&pin, "pin", "", "file holding a copy of the document, used instead of fetching it")
	return cmd
}

func clientUpdateCmd(env Env) *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "update ID [flags]",
		Short: "Change a client's registration (only the flags given)",
		Args:  cmdline.ExactArgs(1, "one client id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			set := cmd.Flags().Changed
			var p admin.ClientPatch
			if set("name") {
				p.Name = &f.name
			}
			if set("redirect-uri") {
				r := f.redirects
				p.RedirectURIs = &r
			}
			list := func(flag, v string) *[]string {
				if !set(flag) {
					return nil
				}
				l := splitList(v)
				return &l
			}
			p.AllowedScopes, p.DefaultScopes, p.GrantTypes = list("allowed-scopes", f.allowed), list("default-scopes", f.defaults), list("grant-types", f.grants)
			if set("logo-url") {
				p.LogoURL = &f.logo
			}
			if set("contact") {
				p.Contact = &f.contact
			}
			if set("id-token-alg") {
				p.IDTokenAlg = &f.idTokenAlg
			}
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			info, err := svc.UpdateClient(cmd.Context(), actor, args[0], p)
			if err != nil {
				return err
			}
			return printClient(cmd.OutOrStdout(), jsonOut(cmd), info, "")
		},
	}
	f.register(cmd)
	return cmd
}

func clientListCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List every client",
		RunE: func(cmd *cobra.Command, _ []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			cs, err := svc.ListClients(cmd.Context())
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"clients": cs})
			}
			return table(cmd.OutOrStdout(), "ID\tNAME\tTYPE\tSTATUS\tREDIRECT URIS", func(tw io.Writer) {
				for _, ci := range cs {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", textout.Visible(ci.ID), textout.Visible(ci.Name), clientType(ci), clientStatus(ci),
						textout.Visible(strings.Join(ci.RedirectURIs, " ")))
				}
			})
		},
	}
}

func clientShowCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "show ID",
		Short: "Show one client's registration",
		Args:  cmdline.ExactArgs(1, "one client id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			info, err := svc.GetClient(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return printClient(cmd.OutOrStdout(), jsonOut(cmd), info, "")
		},
	}
}

// clientSetDisabledCmd is `clients disable ID` or `clients enable ID`.
func clientSetDisabledCmd(env Env, verb string) *cobra.Command {
	short := "Refuse the client at once (its links and tokens stop working)"
	if verb == "enable" {
		short = "Let a disabled client in again"
	}
	return &cobra.Command{
		Use:   verb + " ID",
		Short: short,
		Args:  cmdline.ExactArgs(1, "one client id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			info, err := svc.SetClientDisabled(cmd.Context(), actor, args[0], verb == "disable")
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(cmd.OutOrStdout(), info)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Client %s %sd.\n", args[0], verb)
			return err
		},
	}
}

func clientDeleteCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a client with its links and tokens",
		Args:  cmdline.ExactArgs(1, "one client id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			if err := svc.DeleteClient(cmd.Context(), actor, args[0]); err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"deleted": args[0]})
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Client %s deleted, with its links and tokens.\n", args[0])
			return err
		},
	}
}

func clientRotateSecretCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "rotate-secret ID",
		Short: "Give a confidential client a new secret (printed once, stored hashed)",
		Args:  cmdline.ExactArgs(1, "one client id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			cc, err := svc.RotateClientSecret(cmd.Context(), actor, args[0])
			if err != nil {
				return err
			}
			return printClient(cmd.OutOrStdout(), jsonOut(cmd), cc.Client, cc.Secret)
		},
	}
}

func clientType(c admin.ClientInfo) string {
	switch {
	case c.Dynamic:
		return "dcr"
	case c.URLClient && c.OpenLinked:
		return "url (open)"
	case c.URLClient && c.Pinned:
		return "url (pinned)"
	case c.URLClient:
		return "url"
	case c.JWKSURI != "":
		return "private_key_jwt"
	}
	if c.Public {
		return "public"
	}
	return "confidential"
}

func clientStatus(c admin.ClientInfo) string {
	if c.Disabled {
		return "disabled"
	}
	return "active"
}

// printClient prints a client and, when secret is set, the one-time secret.
func printClient(out io.Writer, asJSON bool, c admin.ClientInfo, secret string) error {
	if asJSON {
		v := struct {
			Client admin.ClientInfo `json:"client"`
			Secret string           `json:"client_secret,omitempty"`
		}{c, secret}
		return writeJSON(out, v)
	}
	tw := newTable(out)
	fmt.Fprintf(tw, "Client ID:\t%s\n", c.ID)
	fmt.Fprintf(tw, "Name:\t%s\n", textout.Visible(c.Name))
	fmt.Fprintf(tw, "Type:\t%s\n", clientType(c))
	fmt.Fprintf(tw, "Status:\t%s\n", clientStatus(c))
	fmt.Fprintf(tw, "Redirect URIs:\t%s\n", textout.Visible(strings.Join(c.RedirectURIs, " ")))
	fmt.Fprintf(tw, "Allowed scopes:\t%s\n", strings.Join(c.AllowedScopes, " "))
	fmt.Fprintf(tw, "Default scopes:\t%s\n", strings.Join(c.DefaultScopes, " "))
	fmt.Fprintf(tw, "Grant types:\t%s\n", strings.Join(c.GrantTypes, " "))
	if c.LogoURL != "" {
		fmt.Fprintf(tw, "Logo URL:\t%s\n", textout.Visible(c.LogoURL))
	}
	if c.Contact != "" {
		fmt.Fprintf(tw, "Contact:\t%s\n", textout.Visible(c.Contact))
	}
	if c.IDTokenSignedResponseAlg != "" {
		fmt.Fprintf(tw, "ID token algorithm:\t%s\n", c.IDTokenSignedResponseAlg)
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
