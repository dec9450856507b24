package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Resource URIs. Every resource is JSON (application/json), the same value the matching
// tool returns: scheduler://status = status, mission://{id} = get_mission,
// mission://{id}/log = get_mission_log (latest attempt), voyage://{id} = voyage_status.
const (
	StatusURI        = "scheduler://status"
	missionTemplate  = "mission://{id}"
	missionLogTmpl   = "mission://{id}/log"
	voyageTemplate   = "voyage://{id}"
	resourceMIMEType = "application/json"
)

func missionURI(id string) string    { return "mission://" + id }
func missionLogURI(id string) string { return "mission://" + id + "/log" }
func voyageURI(id string) string     { return "voyage://" + id }

func (s *Server) addResources() {
	e := s.deps.Engine
	s.mcp.AddResource(mcp.NewResource(StatusURI, "scheduler status",
		mcp.WithResourceDescription("Missions per state, paused or not, the scheduler loop, active voyages, open escalations and agents (the status tool's answer). Subscribe to hear about every change."),
		mcp.WithMIMEType(resourceMIMEType)),
		func(ctx context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			raw, err := s.deps.status.get(ctx, e)
			return jsonContents(r.Params.URI, raw, err)
		})
	s.addTemplate(resourceTemplate{
		tmpl: mcp.NewResourceTemplate(missionLogTmpl, "mission log",
			mcp.WithTemplateDescription("The latest attempt of a mission: the end of its agent's output and its events (the get_mission_log tool's answer)."),
			mcp.WithTemplateMIMEType(resourceMIMEType)),
		prefix: domain.PrefixMission,
		exists: s.missionExists,
		read: func(ctx context.Context, id string) (any, error) {
			return missionLog(ctx, s.deps, GetMissionLogArgs{MissionID: id})
		},
	})
	s.addTemplate(resourceTemplate{
		tmpl: mcp.NewResourceTemplate(missionTemplate, "mission",
			mcp.WithTemplateDescription("One mission with its dependencies, attempts, landings, escalation and why it is not running (the get_mission tool's answer)."),
			mcp.WithTemplateMIMEType(resourceMIMEType)),
		prefix: domain.PrefixMission,
		exists: s.missionExists,
		read:   func(ctx context.Context, id string) (any, error) { return e.GetMission(ctx, id) },
	})
	s.addTemplate(resourceTemplate{
		tmpl: mcp.NewResourceTemplate(voyageTemplate, "voyage",
			mcp.WithTemplateDescription("One voyage with each mission's state and reason and its open escalations (the voyage_status tool's answer)."),
			mcp.WithTemplateMIMEType(resourceMIMEType)),
		prefix: domain.PrefixVoyage,
		exists: func(ctx context.Context, id string) error { _, err := e.Voyage(ctx, id); return err },
		read:   func(ctx context.Context, id string) (any, error) { return e.VoyageStatus(ctx, id) },
	})
}

// resourceTemplate is one resource template: its id kind, how to tell that an id names
// something (exists, for preflight) and how to read it.
type resourceTemplate struct {
	tmpl   mcp.ResourceTemplate
	prefix string
	exists func(ctx context.Context, id string) error
	read   func(ctx context.Context, id string) (any, error)
}

// addTemplate registers t with mcp-go and keeps it for checkResource. The handler checks the
// id as checkResource does (templateID), then reads.
func (s *Server) addTemplate(t resourceTemplate) {
	s.templates = append(s.templates, t)
	s.mcp.AddResourceTemplate(t.tmpl, func(ctx context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		id, err := templateID(r.Params.URI, r.Params.Arguments, t.prefix)
		if err != nil {
			return nil, err
		}
		v, err := t.read(ctx, id)
		return jsonContents(r.Params.URI, v, err)
	})
}

func (s *Server) missionExists(ctx context.Context, id string) error {
	_, err := s.deps.Engine.Mission(ctx, id)
	return err
}

// checkResource returns a *resourceNotFoundError when uri matches a template (as mcp-go
// matches it) but its id is malformed or names nothing, another error when the lookup
// failed otherwise, and nil when the read may go on. A mission:// or voyage:// URI that no
// template matches is not found too (mcp-go would answer so, without saying what the forms
// are); any other URI is left to mcp-go.
func (s *Server) checkResource(ctx context.Context, uri string) error {
	for _, t := range s.templates {
		if t.tmpl.URITemplate == nil || !t.tmpl.URITemplate.Regexp().MatchString(uri) {
			continue
		}
		args := map[string]any{}
		for name, v := range t.tmpl.URITemplate.Match(uri) {
			args[name] = v.V
		}
		id, err := templateID(uri, args, t.prefix)
		if err != nil {
			return err
		}
		return notFound(uri, t.exists(ctx, id))
	}
	for _, prefix := range []string{domain.PrefixMission, domain.PrefixVoyage} {
		if strings.HasPrefix(uri, resourceScheme(prefix)) {
			return &resourceNotFoundError{uri: uri, why: "no resource has this form (they are " + StatusURI + ", mission://{id}, mission://{id}/log and voyage://{id}, without query); " + idSources(prefix)}
		}
	}
	return nil
}

// resourceScheme is the URI scheme of the resources of ids with the prefix.
func resourceScheme(prefix string) string {
	if prefix == domain.PrefixVoyage {
		return "voyage://"
	}
	return "mission://"
}

// idSources says where ids of a kind come from, for the not-found message.
func idSources(prefix string) string {
	if prefix == domain.PrefixVoyage {
		return "voyage ids (" + prefix + "_…) come from dispatch and status (its active voyages)"
	}
	return "mission ids (" + prefix + "_…) come from dispatch, create_mission and list_missions"
}

// templateID reads the {id} of a resource URI (args are the template variables as mcp-go
// matched them) and checks it is an id of the given kind (no lookup, and no path, is ever
// built from anything else).
func templateID(uri string, args map[string]any, prefix string) (string, error) {
	var id string
	switch v := args["id"].(type) {
	case []string: // mcp-go hands template variables over as lists
		if len(v) == 1 {
			id = v[0]
		}
	case string:
		id = v
	}
	if !domain.ValidID(prefix, id) || strings.Contains(uri, "?") {
		return "", &resourceNotFoundError{uri: uri, why: fmt.Sprintf("%q is not an id: ids look like %s_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D (no query); %s",
			clip(id, 80), prefix, idSources(prefix))}
	}
	return id, nil
}

// notFound turns a caller's mistake (an unknown id) into a *resourceNotFoundError; other
// errors are returned as they are. The text does not depend on which lookup found nothing
// (preflight's existence check or the handler's read).
func notFound(uri string, err error) error {
	if err == nil || !isCallerError(err) {
		return err
	}
	prefix, kind := domain.PrefixMission, "mission"
	if strings.HasPrefix(uri, resourceScheme(domain.PrefixVoyage)) {
		prefix, kind = domain.PrefixVoyage, "voyage"
	}
	why := err.Error()
	if errors.Is(err, domain.ErrNotFound) {
		why = "no " + kind + " has this id (it never existed, or was pruned)"
	}
	return &resourceNotFoundError{uri: uri, why: why + "; " + idSources(prefix)}
}

// jsonContents answers a resource read with v as JSON; a caller's mistake (unknown id) is
// reported as "resource not found", anything else as a server error.
func jsonContents(uri string, v any, err error) ([]mcp.ResourceContents, error) {
	if err != nil {
		return nil, notFound(uri, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", uri, err)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: resourceMIMEType, Text: string(b)}}, nil
}
