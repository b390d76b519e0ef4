-- +goose Up
-- calendar_tag names the busy times the connected calendars of a
-- business's staff stored: a new random value whenever a sync changes
-- them or a calendar is set or removed, never when a sync finds nothing
-- new; empty while no staff member has a calendar. Availability reads it
-- beside the business row's version and keeps each day's busy times in
-- memory under it, so that a calendar read once costs nothing until it
-- changes (docs/calendars.md "Availability").
ALTER TABLE businesses ADD COLUMN calendar_tag text NOT NULL DEFAULT '';
UPDATE businesses SET calendar_tag = 'before-00029'
WHERE id IN (SELECT business_id FROM staff_calendars);

-- +goose Down
ALTER TABLE businesses DROP COLUMN calendar_tag;
