//! Fuzz the settings loader: any bytes as a settings file either load or give an error, never a panic.

#![no_main]

use agent_rules::Settings;
use agent_tool_traits::Source;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("agent-guard-fuzz-settings-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join("settings.json");
    if std::fs::write(&file, data).is_err() {
        return;
    }
    let mut settings = Settings::new();
    let _ = settings.add_file(&file, Source::Project, &dir);
    let _ = agent_decide::check_settings_file(&file);
});
