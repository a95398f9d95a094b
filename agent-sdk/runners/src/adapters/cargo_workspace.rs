//! What `cargo metadata` tells the cargo adapter: each test binary's source, each package's
//! directory and package id spec, the packages whose libraries have doc tests, and the
//! members' test binaries for `cargo test`'s package-relative `Running` lines.

use super::cargo_libtest;
use super::Ctx;
use crate::error::RunnerError;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Facts from `cargo metadata` that map nextest binary ids and directories to source paths
/// and package names.
#[derive(Debug, Clone, Default)]
pub struct Workspace {
    /// Binary id (`pkg`, `pkg::test`, `pkg::bin/name`) → target source, relative to the
    /// project.
    pub sources: HashMap<String, String>,
    /// Package name → package directory, relative to the project (`""` for the root).
    pub packages: Vec<(String, String)>,
    /// Package name → its unambiguous package id spec (`path+file:///…#name@1.0.0`), for
    /// every `--package`: a bare name is ambiguous when Cargo.lock also holds a registry
    /// crate of that name (a member `itoa` beside a dependency on the registry's `itoa`).
    pub pkgids: HashMap<String, String>,
    /// Packages whose library has doc tests.
    pub doc_packages: Vec<DocPackage>,
    /// Members' test binaries, for `cargo test`'s package-relative `Running` lines.
    pub member_sources: cargo_libtest::MemberSources,
}

/// A package whose library has doc tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocPackage {
    /// The package name (`my-crate`).
    pub package: String,
    /// Its package id spec, as `--package` takes it.
    pub pkgid: String,
    /// The library's crate name, as `Doc-tests my_crate` names it.
    pub crate_name: String,
    /// Whether cargo tests it when no package is named.
    pub default_member: bool,
}

#[derive(Deserialize)]
struct Metadata {
    packages: Vec<MetaPackage>,
    #[serde(default)]
    workspace_default_members: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct MetaPackage {
    id: String,
    name: String,
    version: String,
    manifest_path: PathBuf,
    targets: Vec<MetaTarget>,
}

#[derive(Deserialize)]
struct MetaTarget {
    name: String,
    kind: Vec<String>,
    src_path: PathBuf,
    #[serde(default)]
    doctest: bool,
}

/// Target kinds that build the package's library: its test binary's id is the package name.
const LIB_KINDS: &[&str] = &["lib", "rlib", "dylib", "cdylib", "staticlib", "proc-macro"];

fn rel(root: &Path, p: &Path) -> String {
    p.strip_prefix(root)
        .unwrap_or(p)
        .to_string_lossy()
        .replace('\\', "/")
}

pub(crate) async fn workspace(ctx: &Ctx<'_>, cargo: &Path) -> Result<Workspace, RunnerError> {
    let mut inv = ctx.invocation(cargo);
    inv.arg("metadata")
        .arg("--no-deps")
        .arg("--format-version=1");
    let out = ctx.helper(&inv).await?;
    let meta: Metadata = serde_json::from_slice(&out.stdout).map_err(|_| {
        RunnerError::Unsupported(format!(
            "cargo metadata failed in {}: {}",
            ctx.project.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    })?;
    let mut ws = Workspace::default();
    for p in meta.packages {
        let dir = p
            .manifest_path
            .parent()
            .map(|d| rel(ctx.project, d))
            .unwrap_or_default();
        for t in &p.targets {
            let kind = t.kind.first().map(String::as_str).unwrap_or("lib");
            let id = match kind {
                "test" => format!("{}::{}", p.name, t.name),
                "bin" | "example" | "bench" => format!("{}::{kind}/{}", p.name, t.name),
                k if LIB_KINDS.contains(&k) => p.name.clone(),
                // A build script (`custom-build`) has no tests; it must not take the
                // library's place.
                _ => continue,
            };
            let project_rel = rel(ctx.project, &t.src_path);
            if !dir.is_empty() {
                let member_rel = p
                    .manifest_path
                    .parent()
                    .map_or_else(String::new, |d| rel(d, &t.src_path));
                ws.member_sources
                    .insert((t.name.replace('-', "_"), member_rel), project_rel.clone());
            }
            ws.sources.insert(id, project_rel);
        }
        // Since cargo 1.77 the id is a package id spec; before, `name version (source)`,
        // where `name@version` is the closest spec (the registry's crate of the same name
        // rarely has the member's version).
        let pkgid = if p.id.contains('#') {
            p.id.clone()
        } else {
            format!("{}@{}", p.name, p.version)
        };
        ws.pkgids.insert(p.name.clone(), pkgid.clone());
        let doc_lib = p
            .targets
            .iter()
            .find(|t| t.doctest && t.kind.iter().any(|k| LIB_KINDS.contains(&k.as_str())));
        if let Some(lib) = doc_lib {
            ws.doc_packages.push(DocPackage {
                package: p.name.clone(),
                pkgid,
                crate_name: lib.name.clone(),
                // Cargo before 1.71 does not say: every member then counts.
                default_member: match &meta.workspace_default_members {
                    Some(members) => members.contains(&p.id),
                    None => true,
                },
            });
        }
        ws.packages.push((p.name, dir));
    }
    Ok(ws)
}
