//! The facts of a file tool's call (Read, Write, Edit, Grep, …): the sandbox's report on each file it names.

use agent_fs_sandbox::Reach;
use agent_rules::ToolKind;
use agent_tool_traits::Access;

use super::Gathering;

impl Gathering<'_> {
    /// Checks each file of `list` for `access`. A coding agent's search tool reads hidden files too, whatever its
    /// glob: a directory it searches is checked for the protected places below it.
    pub(super) fn files(&mut self, tool: &str, access: Access, list: &[String]) {
        let searches = agent_rules::kind_of(tool) == ToolKind::Grep;
        for path in list {
            let Some(check) = self.check_path(path, access) else {
                continue;
            };
            if searches {
                let reach = Reach {
                    hidden: true,
                    names: &[],
                };
                self.search(tool, &check, &reach);
            }
            if access == Access::Read {
                self.content(&check);
            }
            self.keep(access, check);
        }
    }
}
