//! JavaScript projects whose package.json names no runner: the runner comes through a wrapper
//! (kcd-scripts, react-scripts: `"test": "kcd-scripts test"`) or is configured by a file of
//! its own. huddle then decides from the runner's config file, then from what is installed:
//! a runner package the project resolves, directly or through one of its dependencies.

use crate::adapters::node_entry;
use crate::framework::Framework;
use std::path::Path;

/// Config file names of each runner, in the order they are looked for.
const CONFIGS: &[(Framework, &[&str])] = &[
    (
        Framework::Vitest,
        &[
            "vitest.config.ts",
            "vitest.config.mts",
            "vitest.config.js",
            "vitest.config.mjs",
            "vitest.config.cjs",
            "vitest.workspace.ts",
            "vitest.workspace.js",
        ],
    ),
    (
        Framework::Jest,
        &[
            "jest.config.js",
            "jest.config.ts",
            "jest.config.mjs",
            "jest.config.cjs",
            "jest.config.json",
        ],
    ),
    (
        Framework::Mocha,
        &[
            ".mocharc.js",
            ".mocharc.cjs",
            ".mocharc.json",
            ".mocharc.yml",
            ".mocharc.yaml",
        ],
    ),
];

const NODE_RUNNERS: [Framework; 3] = [Framework::Vitest, Framework::Jest, Framework::Mocha];

/// The runner a JavaScript project without a runner dependency uses, and why.
pub(crate) fn from_config_or_install(
    dir: &Path,
    checks: &mut Vec<String>,
) -> Option<(Framework, String)> {
    let mut configs = CONFIGS
        .iter()
        .flat_map(|(fw, names)| names.iter().map(move |n| (*fw, *n)))
        .filter(|(_, name)| dir.join(name).is_file());
    let config = configs.next();
    checks.push(format!(
        "runner config files: {}",
        config.map_or("none".to_string(), |(_, n)| n.to_string())
    ));
    let installed: Vec<(Framework, String)> = NODE_RUNNERS
        .into_iter()
        .filter_map(|fw| {
            if let Some(pkg) = node_entry::package_dir(dir, fw.name()) {
                return Some((fw, format!("{} is installed ({})", fw, pkg.display())));
            }
            let (wrapper, pkg) = node_entry::installed_through(dir, fw.name())?;
            Some((
                fw,
                format!("{fw} is installed through {wrapper} ({})", pkg.display()),
            ))
        })
        .collect();
    checks.push(format!(
        "installed runners: {:?}",
        installed.iter().map(|(_, why)| why).collect::<Vec<_>>()
    ));
    if let Some((fw, name)) = config {
        let also = installed
            .iter()
            .find(|(f, _)| *f == fw)
            .map_or(String::new(), |(_, why)| format!("; {why}"));
        return Some((
            fw,
            format!("{name} configures {fw}, though package.json names no runner{also}"),
        ));
    }
    let (fw, why) = installed.into_iter().next()?;
    Some((fw, format!("package.json names no runner, but {why}")))
}
