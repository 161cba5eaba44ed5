//! Prints the analysis of each command-line argument.

use agent_bash_guard::BashGuard;

fn main() {
    let guard = BashGuard::default();
    for command in std::env::args().skip(1) {
        let analysis = guard.analyze(&command);
        let verdict = analysis.verdict();
        println!("{command}\n  => {} ({})", verdict.decision, verdict.reason());
        for (i, c) in analysis.commands.iter().enumerate() {
            println!(
                "  [{i}] {:?} inner={} {:?}/{} parent={:?} {} ro={} lit={}",
                c.argv,
                c.inner,
                c.location.kind,
                c.location.depth,
                c.location.parent,
                c.class.as_str(),
                c.read_only,
                c.literal
            );
        }
        for r in &analysis.reads {
            println!("  read  {} ({:?})", r.path, r.via);
        }
        for w in &analysis.writes {
            println!("  write {} ({:?})", w.path, w.via);
        }
        for f in &analysis.findings {
            println!("  {} {}", f.decision, f.reason);
        }
    }
}
