-- Schema 9 (issue 13, "which landings move"): the landings that wait for something to happen (approve_landing, a repair mission): the
-- planning step reads them every tick to say why they wait (Reader.MissionsLandingAwaiting),
-- so, like the landing queue, they get a partial index whose rows are live work only.
CREATE INDEX missions_landing_awaiting ON missions (id)
  WHERE state = 'completed' AND landing IN ('approval','repair');
