package tools

// LoopIdleText says what it means that no scheduler loop leads a data dir (StatusResult.Loop
// is "idle"): the sentence `mcp-scheduler status` and `mcp-scheduler watch` print, so that
// both say it the same way.
const LoopIdleText = "not running: nothing is launched or landed until `mcp-scheduler daemon` or a client's `mcp-scheduler serve` runs on this data dir"
