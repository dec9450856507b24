package tools

import (
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/e2e/testenv"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

func readJSON[T any](b *bundle, uri string) T {
	b.t.Helper()
	res, err := b.client.ReadResource(b.ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
	require.NoError(b.t, err, uri)
	require.Len(b.t, res.Contents, 1)
	tc, ok := mcp.AsTextResourceContents(res.Contents[0])
	require.True(b.t, ok)
	require.Equal(b.t, "application/json", tc.MIMEType)
	require.Equal(b.t, uri, tc.URI)
	var out T
	require.NoError(b.t, json.Unmarshal([]byte(tc.Text), &out))
	return out
}

func TestResources_ReadEach(t *testing.T) {
	b := setup(t, setupOpts{})
	list, err := b.client.ListResources(b.ctx, mcp.ListResourcesRequest{})
	require.NoError(t, err)
	require.Len(t, list.Resources, 1)
	require.Equal(t, StatusURI, list.Resources[0].URI)
	tmpls, err := b.client.ListResourceTemplates(b.ctx, mcp.ListResourceTemplatesRequest{})
	require.NoError(t, err)
	var names []string
	for _, tm := range tmpls.ResourceTemplates {
		names = append(names, tm.URITemplate.Raw())
	}
	require.ElementsMatch(t, []string{"mission://{id}", "mission://{id}/log", "voyage://{id}"}, names)

	d := ok[DispatchResult](b, "dispatch", map[string]any{"title": "v", "missions": []any{map[string]any{"key": "k", "title": "k"}}})
	id := d.IDs["k"]
	st := readJSON[StatusResult](b, StatusURI)
	require.Equal(t, 1, st.Counts[domain.StatePending])
	det := readJSON[engine.MissionDetail](b, "mission://"+id)
	require.Equal(t, id, det.Mission.ID)
	lg := readJSON[MissionLog](b, "mission://"+id+"/log")
	require.Equal(t, id, lg.MissionID)
	vs := readJSON[engine.VoyageDetail](b, "voyage://"+d.Voyage.ID)
	require.Equal(t, d.Voyage.ID, vs.Voyage.ID)

	w := newStdioWire(t, b) // a real transport: the in-process client has no preflight (preflight.go)
	for _, bad := range []string{"mission://../../etc/passwd", "mission://" + unknownMission, "voyage://" + id, "mission://x/log", "mission://" + id + "?x=1"} {
		_, e := w.rpc("resources/read", `{"uri":"`+bad+`"}`)
		wantCode(t, e, mcp.RESOURCE_NOT_FOUND, "resource not found: "+bad)
		_, err := b.client.ReadResource(b.ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: bad}})
		require.Error(t, err, bad)
	}
}

// TestResources_SubscribeLegacy: protocol 2025-11-25 and older subscribe per URI and hear
// notifications/resources/updated when the mission (or anything, for the status) changes.
func TestResources_SubscribeLegacy(t *testing.T) {
	b := setup(t, setupOpts{protocol: mcp.LATEST_LEGACY_PROTOCOL_VERSION})
	m := b.createMission(map[string]any{"title": "watched"})
	other := b.createMission(map[string]any{"title": "unwatched"})
	for _, u := range []string{"mission://" + m.ID, StatusURI} {
		require.NoError(t, b.client.Subscribe(b.ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: u}}))
	}
	updated := func(uri string) int {
		n := 0
		for _, x := range b.notes.byMethod(mcp.MethodNotificationResourceUpdated) {
			if x.Params.AdditionalFields["uri"] == uri {
				n++
			}
		}
		return n
	}
	ok[MissionResult](b, "update_mission", map[string]any{"mission_id": m.ID, "priority": 5})
	testenv.WaitFor(t, "mission notification", func() bool { return updated("mission://"+m.ID) >= 1 })
	testenv.WaitFor(t, "status notification", func() bool { return updated(StatusURI) >= 1 })
	ok[MissionResult](b, "update_mission", map[string]any{"mission_id": other.ID, "priority": 5})
	testenv.WaitFor(t, "second status notification", func() bool { return updated(StatusURI) >= 2 })
	require.Zero(t, updated("mission://"+other.ID), "no notification for a URI nobody subscribed to")

	require.NoError(t, b.client.Unsubscribe(b.ctx, mcp.UnsubscribeRequest{Params: mcp.UnsubscribeParams{URI: "mission://" + m.ID}}))
	seen, statuses := updated("mission://"+m.ID), updated(StatusURI)
	ok[MissionResult](b, "update_mission", map[string]any{"mission_id": m.ID, "priority": 6})
	testenv.WaitFor(t, "another status notification", func() bool { return updated(StatusURI) > statuses })
	require.Equal(t, seen, updated("mission://"+m.ID), "unsubscribed")
}

// TestResources_Listen2026: protocol 2026-07-28 clients open subscriptions/listen naming the
// URIs; notifications arrive tagged with the listen request's id.
func TestResources_Listen2026(t *testing.T) {
	b := setup(t, setupOpts{protocol: mcp.ProtocolVersion20260728})
	require.Equal(t, mcp.ProtocolVersion20260728, b.client.ProtocolVersion())
	d := ok[DispatchResult](b, "dispatch", map[string]any{"title": "v", "missions": []any{map[string]any{"key": "k", "title": "k"}}})
	vuri := "voyage://" + d.Voyage.ID
	stop, err := b.client.ListenAsync(b.ctx, mcp.SubscriptionFilter{ResourceSubscriptions: []string{vuri}}, nil)
	require.NoError(t, err)
	defer stop()
	testenv.WaitFor(t, "the subscription acknowledgement", func() bool {
		return len(b.notes.byMethod(mcp.MethodNotificationSubscriptionsAcknowledged)) > 0
	})
	ok[MissionResult](b, "cancel_mission", map[string]any{"mission_id": d.IDs["k"]})
	var got mcp.JSONRPCNotification
	testenv.WaitFor(t, "voyage notification", func() bool {
		for _, x := range b.notes.byMethod(mcp.MethodNotificationResourceUpdated) {
			if x.Params.AdditionalFields["uri"] == vuri {
				got = x
				return true
			}
		}
		return false
	})
	require.NotNil(t, got.Params.Meta[mcp.MetaKeySubscriptionID], "tagged with the listen request's id")
}
