package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

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
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(missionLogTmpl, "mission log",
		mcp.WithTemplateDescription("The latest attempt of a mission: the end of its agent's output and its events (the get_mission_log tool's answer)."),
		mcp.WithTemplateMIMEType(resourceMIMEType)),
		func(ctx context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			id, err := templateID(r, domain.PrefixMission)
			if err != nil {
				return nil, err
			}
			l, err := missionLog(ctx, s.deps, GetMissionLogArgs{MissionID: id})
			return jsonContents(r.Params.URI, l, err)
		})
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(missionTemplate, "mission",
		mcp.WithTemplateDescription("One mission with its dependencies, attempts, landings, escalation and why it is not running (the get_mission tool's answer)."),
		mcp.WithTemplateMIMEType(resourceMIMEType)),
		func(ctx context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			id, err := templateID(r, domain.PrefixMission)
			if err != nil {
				return nil, err
			}
			d, err := e.GetMission(ctx, id)
			return jsonContents(r.Params.URI, d, err)
		})
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(voyageTemplate, "voyage",
		mcp.WithTemplateDescription("One voyage with each mission's state and reason and its open escalations (the voyage_status tool's answer)."),
		mcp.WithTemplateMIMEType(resourceMIMEType)),
		func(ctx context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			id, err := templateID(r, domain.PrefixVoyage)
			if err != nil {
				return nil, err
			}
			d, err := e.VoyageStatus(ctx, id)
			return jsonContents(r.Params.URI, d, err)
		})
}

// templateID reads the {id} of a resource URI and checks it is an id of the given kind (no
// lookup, and no path, is ever built from anything else).
func templateID(r mcp.ReadResourceRequest, prefix string) (string, error) {
	var id string
	switch v := r.Params.Arguments["id"].(type) {
	case []string: // mcp-go hands template variables over as lists
		if len(v) == 1 {
			id = v[0]
		}
	case string:
		id = v
	}
	if !domain.ValidID(prefix, id) || strings.Contains(r.Params.URI, "?") {
		return "", fmt.Errorf("%w: %s: the id must look like %s_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D", server.ErrResourceNotFound, r.Params.URI, prefix)
	}
	return id, nil
}

// jsonContents answers a resource read with v as JSON; a caller's mistake (unknown id) is
// reported as "resource not found", anything else as a server error.
func jsonContents(uri string, v any, err error) ([]mcp.ResourceContents, error) {
	if err != nil {
		if isCallerError(err) {
			return nil, fmt.Errorf("%w: %s: %v", server.ErrResourceNotFound, uri, err)
		}
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", uri, err)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: resourceMIMEType, Text: string(b)}}, nil
}
