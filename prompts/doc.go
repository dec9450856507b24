// Package prompts holds the text mcp-scheduler gives to models: the prompt that plans a
// voyage from a goal, the brief a child agent receives, the prompt of a reviewer and the
// prompt that writes an escalation report. The templates are embedded (templates/*.tmpl) and
// rendered with text/template from plain data structs, so the package imports nothing of
// ours: the MCP layer (tools) serves them as MCP prompts and the scheduler loop writes the
// agent brief into each workspace.
//
// Rendering is deterministic: the same data always gives the same text (golden tests in
// testdata/ hold one rendering of each template).
package prompts
