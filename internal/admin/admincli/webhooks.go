package admincli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/cmdline"
)

func webhooksCmd(env Env) *cobra.Command {
	return group("webhooks", "Business webhook endpoints: booking events signed with Standard Webhooks",
		webhookCreateCmd(env), webhookListCmd(env), webhookUpdateCmd(env),
		webhookSetEnabledCmd(env, "disable"), webhookSetEnabledCmd(env, "enable"),
		webhookDeleteCmd(env), webhookRotateCmd(env), webhookDeliveriesCmd(env), webhookReplayCmd(env))
}

func printEndpoint(out io.Writer, w admin.WebhookInfo, secret string) error {
	state := "enabled"
	if !w.Enabled {
		state = "disabled"
	}
	fmt.Fprintf(out, "Endpoint: %s\nBusiness: %s\nURL:      %s\nEvents:   %s\nState:    %s\n",
		w.ID, w.Business, w.URL, strings.Join(w.Events, ", "), state)
	if secret != "" {
		fmt.Fprintf(out, "Secret:   %s\n(shown only now: give it to the receiver, which verifies webhook-signature with it)\n", secret)
	}
	return nil
}

func webhookCreateCmd(env Env) *cobra.Command {
	var business, url, events string
	cmd := &cobra.Command{
		Use:   "create --business REF --url URL [--events booking.created,booking.rescheduled,booking.cancelled,booking.reminder]",
		Short: "Register a business's webhook endpoint (its secret is printed once)",
		Args:  cmdline.MaxArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if business == "" || url == "" {
				return cmdline.Usagef("%s: --business and --url are required", cmd.CommandPath())
			}
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			w, err := svc.CreateWebhook(cmd.Context(), actor, business, url, splitList(events))
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(cmd.OutOrStdout(), w)
			}
			return printEndpoint(cmd.OutOrStdout(), w.WebhookInfo, w.Secret)
		},
	}
	cmd.Flags().StringVar(&business, "business", "", "the business reference")
	cmd.Flags().StringVar(&url, "url", "", "https URL that receives the events")
	cmd.Flags().StringVar(&events, "events", "", "event types, comma separated (default: all of them)")
	return cmd
}

func webhookListCmd(env Env) *cobra.Command {
	var business string
	cmd := &cobra.Command{
		Use:   "list [--business REF]",
		Short: "List webhook endpoints",
		Args:  cmdline.MaxArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			ws, err := svc.ListWebhooks(cmd.Context(), business)
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(cmd.OutOrStdout(), ws)
			}
			return table(cmd.OutOrStdout(), "ID\tBUSINESS\tSTATE\tEVENTS\tURL", func(tw io.Writer) {
				for _, w := range ws {
					state := "enabled"
					if !w.Enabled {
						state = "disabled"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", w.ID, w.Business, state, strings.Join(w.Events, ","), w.URL)
				}
			})
		},
	}
	cmd.Flags().StringVar(&business, "business", "", "only this business's endpoints")
	return cmd
}

func webhookSetEnabledCmd(env Env, verb string) *cobra.Command {
	short := "Stop sending events to the endpoint (pending deliveries fail and can be replayed)"
	if verb == "enable" {
		short = "Send events to a disabled endpoint again"
	}
	return &cobra.Command{
		Use:   verb + " ID",
		Short: short,
		Args:  cmdline.ExactArgs(1, "one endpoint id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			w, err := svc.SetWebhookEnabled(cmd.Context(), actor, args[0], verb == "enable")
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(cmd.OutOrStdout(), w)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Endpoint %s %sd.\n", w.ID, verb)
			return err
		},
	}
}

func webhookUpdateCmd(env Env) *cobra.Command {
	var url, events string
	cmd := &cobra.Command{
		Use:   "update ID [--url URL] [--events booking.created,…]",
		Short: "Change an endpoint's URL or events (its secret and state stay)",
		Args:  cmdline.ExactArgs(1, "one endpoint id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var p admin.WebhookPatch
			if cmd.Flags().Changed("url") {
				p.URL = &url
			}
			if cmd.Flags().Changed("events") {
				ev := splitList(events)
				p.Events = &ev
			}
			if p.URL == nil && p.Events == nil {
				return cmdline.Usagef("%s: give --url, --events or both", cmd.CommandPath())
			}
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			w, err := svc.UpdateWebhook(cmd.Context(), actor, args[0], p)
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(cmd.OutOrStdout(), w)
			}
			return printEndpoint(cmd.OutOrStdout(), w, "")
		},
	}
	cmd.Flags().StringVar(&url, "url", "", "the new https URL")
	cmd.Flags().StringVar(&events, "events", "", "the new event types, comma separated (empty: all of them)")
	return cmd
}

func webhookDeleteCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID",
		Short: "Delete an endpoint and its delivery log",
		Args:  cmdline.ExactArgs(1, "one endpoint id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			if err := svc.DeleteWebhook(cmd.Context(), actor, args[0]); err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(cmd.OutOrStdout(), map[string]string{"deleted": args[0]})
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Endpoint %s deleted.\n", args[0])
			return err
		},
	}
}

func webhookRotateCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "rotate-secret ID",
		Short: "Give an endpoint a new secret (printed once); every later delivery is signed with it",
		Args:  cmdline.ExactArgs(1, "one endpoint id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			w, err := svc.RotateWebhookSecret(cmd.Context(), actor, args[0])
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(cmd.OutOrStdout(), w)
			}
			return printEndpoint(cmd.OutOrStdout(), w.WebhookInfo, w.Secret)
		},
	}
}

func webhookDeliveriesCmd(env Env) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "deliveries ID [--limit N]",
		Short: "An endpoint's delivery log, newest first, with every attempt",
		Args:  cmdline.ExactArgs(1, "one endpoint id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			ds, err := svc.WebhookDeliveries(cmd.Context(), args[0], limit)
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(cmd.OutOrStdout(), ds)
			}
			return table(cmd.OutOrStdout(), "DELIVERY (webhook-id)\tTYPE\tSTATUS\tATTEMPTS\tCREATED\tLAST", func(tw io.Writer) {
				for _, d := range ds {
					last := d.LastError
					if n := len(d.Log); n > 0 && d.Log[n-1].StatusCode != 0 {
						last = fmt.Sprintf("HTTP %d %s", d.Log[n-1].StatusCode, last)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", d.ID, d.Topic, d.Status, d.Attempts,
						d.CreatedAt.UTC().Format(time.RFC3339), strings.TrimSpace(last))
				}
			})
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 50, "how many deliveries")
	return cmd
}

func webhookReplayCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "replay DELIVERY-ID",
		Short: "Deliver again now, with the same webhook-id (also e-mail deliveries)",
		Args:  cmdline.ExactArgs(1, "one delivery id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			d, err := svc.ReplayDelivery(cmd.Context(), actor, args[0])
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(cmd.OutOrStdout(), d)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Delivery %s queued again.\n", d.ID)
			return err
		},
	}
}
