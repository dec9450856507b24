package engine

import (
	"fmt"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// CheckMissionSpec makes the checks of CreateMission that need neither the store nor the
// repositories: each field of spec (as normalise does, defaults filled on a copy) and the form
// of the ids it names. A command line calls it before it opens (or creates) a database, so
// that a mistake changes nothing; CreateMission makes the same checks again. Errors are
// *domain.FieldError named as CreateMission names them (priority, depends_on[0], voyage_id).
func CheckMissionSpec(spec MissionSpec, now time.Time) error {
	if err := spec.normalise("", now); err != nil {
		return err
	}
	if spec.VoyageID != "" {
		if err := domain.CheckID("voyage_id", domain.PrefixVoyage, spec.VoyageID); err != nil {
			return err
		}
	}
	for i, dep := range spec.DependsOn {
		if err := domain.CheckID(fmt.Sprintf("depends_on[%d]", i), domain.PrefixMission, dep); err != nil {
			return err
		}
	}
	return nil
}

// Check makes ListMissions' checks of a filter (the voyage id's form, the states' names);
// the errors are *domain.FieldError on voyage_id or states.
func (f MissionFilter) Check() error {
	if f.VoyageID != "" {
		if err := domain.CheckID("voyage_id", domain.PrefixVoyage, f.VoyageID); err != nil {
			return err
		}
	}
	for _, s := range f.States {
		if !s.Valid() {
			return domain.Invalid("states", "unknown state "+string(s), "use pending, leased, running, interrupted, completed, failed, blocked or cancelled")
		}
	}
	return nil
}

// CheckPriority refuses a priority outside MinPriority..MaxPriority, as a *domain.FieldError
// on field. (A spec's 0 means the default and never reaches it; a command line that was
// given 0 explicitly calls it with 0.)
func CheckPriority(field string, p int) error {
	if p < MinPriority || p > MaxPriority {
		return domain.Invalid(field, fmt.Sprintf("%d is out of range", p), fmt.Sprintf("use %d (urgent) to %d; the default is %d", MinPriority, MaxPriority, DefaultPriority))
	}
	return nil
}
