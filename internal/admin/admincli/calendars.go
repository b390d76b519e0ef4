package admincli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/calendar"
	"github.com/linkslot/linkslot/internal/cmdline"
	"github.com/linkslot/linkslot/internal/store"
)

// Connected calendars and reminders (docs/calendars.md).

func staffCmd(env Env) *cobra.Command {
	cal := &cobra.Command{Use: "calendar", Short: "A staff member's own calendar: busy times read, bookings written (CalDAV)"}
	cal.AddCommand(calendarSetCmd(env), calendarSyncCmd(env), calendarShowCmd(env), calendarRemoveCmd(env))
	return group("staff", "Staff members' connected calendars", cal)
}

func remindersCmd(env Env) *cobra.Command {
	return group("reminders", "Reminders before appointments, per business (default 24h and 2h)",
		remindersSetCmd(env), remindersShowCmd(env))
}

// errSyncFailed makes a command whose sync failed exit non-zero after it
// printed the calendar with its last error.
var errSyncFailed = errors.New("the calendar did not sync; see its last error")

func printCalendar(cmd *cobra.Command, c admin.CalendarInfo) error {
	if jsonOut(cmd) {
		if err := writeJSON(cmd.OutOrStdout(), c); err != nil {
			return err
		}
	} else {
		when := func(t *time.Time) string {
			if t == nil {
				return "never"
			}
			return t.UTC().Format(time.RFC3339)
		}
		kind := "CalDAV (busy times read, bookings written)"
		if c.Kind == store.CalendarICS {
			kind = "iCalendar URL (busy times read only)"
		}
		user := ""
		if c.Username != "" {
			user = "\nUser:\t" + c.Username
		}
		last := "none"
		if c.LastError != "" {
			last = c.LastError
		}
		err := table(cmd.OutOrStdout(), "Calendar:\t"+c.Business+" / "+c.Staff, func(tw io.Writer) {
			fmt.Fprintf(tw, "Kind:\t%s\nURL:\t%s%s\nLast sync:\t%s (good: %s)\nObjects:\t%d\nBusy times:\t%d\nLast error:\t%s\n",
				kind, c.URL, user, when(c.AttemptedAt), when(c.SyncedAt), c.Objects, c.BusyTimes, last)
		})
		if err != nil {
			return err
		}
	}
	if c.LastError != "" {
		return errSyncFailed
	}
	return nil
}

func calendarSetCmd(env Env) *cobra.Command {
	var caldav, ics, username string
	var pwStdin bool
	cmd := &cobra.Command{
		Use:   "set BUSINESS STAFF (--caldav URL --username U --password-stdin | --ics URL)",
		Short: "Connect a staff member's calendar (replacing any other) and sync it",
		Args:  cmdline.ExactArgs(2, "a business and a staff reference"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := calendar.Connect{}
			switch {
			case caldav != "" && ics == "":
				if username == "" || !pwStdin {
					return cmdline.Usagef("%s: --caldav needs --username and --password-stdin (passwords are never taken from the command line)", cmd.CommandPath())
				}
				line, err := bufio.NewReader(io.LimitReader(cmd.InOrStdin(), 4096)).ReadString('\n')
				if err != nil && !errors.Is(err, io.EOF) {
					return fmt.Errorf("read password: %w", err)
				}
				c = calendar.Connect{Kind: store.CalendarCalDAV, URL: caldav, Username: username, Password: strings.TrimRight(line, "\r\n")}
			case ics != "" && caldav == "":
				if username != "" || pwStdin {
					return cmdline.Usagef("%s: --ics takes no --username or password", cmd.CommandPath())
				}
				c = calendar.Connect{Kind: store.CalendarICS, URL: ics}
			default:
				return cmdline.Usagef("%s: give one of --caldav URL or --ics URL", cmd.CommandPath())
			}
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			info, err := svc.SetStaffCalendar(cmd.Context(), actor, args[0], args[1], c)
			if err != nil {
				return err
			}
			return printCalendar(cmd, info)
		},
	}
	cmd.Flags().StringVar(&caldav, "caldav", "", "the CalDAV calendar's URL (the calendar collection itself)")
	cmd.Flags().StringVar(&ics, "ics", "", "an iCalendar (.ics) URL, read only")
	cmd.Flags().StringVar(&username, "username", "", "the CalDAV user name")
	cmd.Flags().BoolVar(&pwStdin, "password-stdin", false, "read the CalDAV password (an app password) from the first line of standard input")
	return cmd
}

func calendarSyncCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "sync BUSINESS STAFF",
		Short: "Sync a staff member's calendar now (exit 1 when it fails, with what to fix)",
		Args:  cmdline.ExactArgs(2, "a business and a staff reference"),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			info, err := svc.SyncStaffCalendar(cmd.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			return printCalendar(cmd, info)
		},
	}
}

func calendarShowCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "show BUSINESS STAFF",
		Short: "Show a staff member's calendar: last sync, last error, busy times",
		Args:  cmdline.ExactArgs(2, "a business and a staff reference"),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			info, err := svc.StaffCalendar(cmd.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			return printCalendar(cmd, info)
		},
	}
}

func calendarRemoveCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "remove BUSINESS STAFF",
		Short: "Disconnect a staff member's calendar; its busy times no longer block slots",
		Args:  cmdline.ExactArgs(2, "a business and a staff reference"),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			if err := svc.RemoveStaffCalendar(cmd.Context(), actor, args[0], args[1]); err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(cmd.OutOrStdout(), map[string]string{"removed": args[0] + "/" + args[1]})
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Calendar of %s / %s removed.\n", args[0], args[1])
			return err
		},
	}
}

func printReminders(cmd *cobra.Command, r admin.Reminders) error {
	if jsonOut(cmd) {
		return writeJSON(cmd.OutOrStdout(), r)
	}
	if len(r.Before) == 0 {
		_, err := fmt.Fprintf(cmd.OutOrStdout(), "Reminders of %s: off\n", r.Business)
		return err
	}
	_, err := fmt.Fprintf(cmd.OutOrStdout(), "Reminders of %s: %s before each appointment (an e-mail to the person and a booking.reminder webhook)\n",
		r.Business, strings.Join(r.Before, ", "))
	return err
}

func remindersSetCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "set BUSINESS (24h,2h | off)",
		Short: "Set when reminders go out before each appointment, or turn them off",
		Args:  cmdline.ExactArgs(2, "a business reference and the reminder times"),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			r, err := svc.SetReminders(cmd.Context(), actor, args[0], splitList(args[1]))
			if err != nil {
				return err
			}
			return printReminders(cmd, r)
		},
	}
}

func remindersShowCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "show BUSINESS",
		Short: "Show a business's reminders",
		Args:  cmdline.ExactArgs(1, "a business reference"),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			r, err := svc.GetReminders(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return printReminders(cmd, r)
		},
	}
}
