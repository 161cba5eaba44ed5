//! Settings of the analysis: the network switch and user extensions of the command table.

use serde::Deserialize;

/// How bash-guard is configured, deserialisable from settings (camelCase keys).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BashConfig {
    /// Ask before network commands (the kernel sandbox gives them no network unless the user allows the line).
    /// `None` reads `AGENT_BLOCK_NETWORK` (`false`, `0`, `no`, `off` mean not blocked); blocked by default.
    pub block_network: Option<bool>,
    /// User extensions of the command knowledge table.
    pub commands: CommandTableExtension,
    /// The commands run without `CDPATH` in their environment (the kernel sandbox passes none unless the settings
    /// name it), so `cd NAME` goes to `./NAME`. Not a setting: the caller that knows where commands run sets it.
    /// A line that sets `CDPATH` itself is followed either way.
    #[serde(skip)]
    pub cdpath_unset: bool,
}

/// Commands added to the knowledge table from settings. Each entry is a command name, or for `readOnly` and
/// `deny` a command name followed by the sub-command words it applies to (`"cargo clippy"`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct CommandTableExtension {
    /// Commands read-only with any arguments. Only commands the built-in table does not know can be added; an
    /// entry naming a known command is rejected (reported in diagnostics), its own rules stay.
    pub read_only: Vec<String>,
    /// Commands always denied.
    pub deny: Vec<String>,
    /// Extra network tools (asked while the network is blocked).
    pub network: Vec<String>,
    /// Extra wrappers: programs that run the command in their arguments (the command is their first word; an
    /// option before it is a safety ask). Like `interpreters` and `packageManagers`, only for commands the table
    /// does not know.
    pub wrappers: Vec<String>,
    /// Extra interpreters (never read-only).
    pub interpreters: Vec<String>,
    /// Extra package managers and build tools (never read-only).
    pub package_managers: Vec<String>,
}

impl BashConfig {
    /// Whether network commands are asked: the setting, else `AGENT_BLOCK_NETWORK`, else blocked.
    pub fn network_blocked(&self) -> bool {
        self.network_block().is_some()
    }

    /// What blocks the network, in words a reason can name so that the user knows what to change; `None` when
    /// the network is not blocked.
    pub fn network_block(&self) -> Option<&'static str> {
        match (self.block_network, std::env::var("AGENT_BLOCK_NETWORK")) {
            (Some(true), _) => Some("`agentGuard.blockNetwork`"),
            (Some(false), _) => None,
            (None, Ok(value)) => blocked_by(&value).then_some("`AGENT_BLOCK_NETWORK`"),
            (None, Err(_)) => Some("`agentGuard.blockNetwork`, on by default"),
        }
    }
}

/// The meaning of an `AGENT_BLOCK_NETWORK` value: only an explicit "no" unblocks.
fn blocked_by(value: &str) -> bool {
    !matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "false" | "0" | "no" | "off"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_explicit_no_unblocks() {
        for value in ["false", "0", "no", "OFF", " False "] {
            assert!(!blocked_by(value), "{value}");
        }
        for value in ["true", "1", "", "maybe", "yes"] {
            assert!(blocked_by(value), "{value}");
        }
        assert!(
            BashConfig {
                block_network: Some(true),
                ..BashConfig::default()
            }
            .network_blocked()
        );
        assert!(
            !BashConfig {
                block_network: Some(false),
                ..BashConfig::default()
            }
            .network_blocked()
        );
    }

    #[test]
    fn deserialises_camel_case() {
        let config: BashConfig = serde_json::from_str(
            r#"{"blockNetwork": false, "commands": {"readOnly": ["mytool"], "packageManagers": ["pants"]}}"#,
        )
        .unwrap();
        assert_eq!(config.block_network, Some(false));
        assert_eq!(config.commands.read_only, vec!["mytool".to_owned()]);
        assert_eq!(config.commands.package_managers, vec!["pants".to_owned()]);
    }
}
