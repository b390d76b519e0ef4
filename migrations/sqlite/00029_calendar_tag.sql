-- +goose Up
-- Tags that name stored busy times, so that availability can keep them in
-- memory and know when they changed (docs/calendars.md "Availability").
--
-- businesses.calendar_tag names the busy times of all the business's
-- connected calendars: a new random value whenever a sync changes them or
-- a calendar is set or removed, never when a sync finds nothing new; empty
-- while no staff member has a calendar. Availability reads it beside the
-- business row's version.
--
-- staff_calendars.busy_tag names one calendar's: a new random value
-- whenever its busy times change, so that after a change availability
-- reads again only the calendars that changed.
ALTER TABLE businesses ADD COLUMN calendar_tag text NOT NULL DEFAULT '';
ALTER TABLE staff_calendars ADD COLUMN busy_tag text NOT NULL DEFAULT '';
UPDATE businesses SET calendar_tag = 'before-00029'
WHERE id IN (SELECT business_id FROM staff_calendars);
UPDATE staff_calendars SET busy_tag = 'before-00029-' || staff_id;

-- +goose Down
ALTER TABLE staff_calendars DROP COLUMN busy_tag;
ALTER TABLE businesses DROP COLUMN calendar_tag;
