package policy

// ToolPermitted is the permission profile's decision on whether a run may
// use a tool at all, whatever its phase. It is the one seam where profiles
// are enforced: the agent asks it both when it builds the tools offered to
// the model and when it guards a call. Every profile permits the built-in
// tools for now; profile rules fill this in.
func ToolPermitted(profile, tool string) (ok bool, reason string) {
	_ = profile
	_ = tool
	return true, ""
}
