//! The core's modules form layers: each imports only from modules listed above it in
//! `src/lib.rs` (see "Rust modules" in docs/design.md). This reads the sources and fails
//! on an import that points up or sideways, so no cycle can come back unnoticed.

use std::collections::BTreeSet;
use std::path::Path;

/// The `pub mod` lines of lib.rs, in order.
fn layers(src: &Path) -> Vec<String> {
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("src/lib.rs");
    lib.lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';').to_owned())
        .collect()
}

/// The top-level modules a file names through `crate::` (root re-exports mapped to
/// their modules), test code and comments left out.
fn imports(text: &str) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let code: String =
        code.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
    let mut found = BTreeSet::new();
    let mut add = |name: &str| {
        let module = match name {
            "Error" | "Result" => "error",
            "Tokenizer" => "tokenizer",
            "Vocab" => "vocab",
            "Rank" | "self" | "" => return,
            other => other,
        };
        found.insert(module.to_owned());
    };
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for item in group.split(',') {
                add(item.trim().split("::").next().unwrap_or("").trim());
            }
        } else {
            let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
            add(&rest[..end]);
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.file_name().is_some_and(|n| n == "tests.rs") {
            // A test module of its own (declared under `#[cfg(test)]`): test code.
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn modules_import_only_from_layers_above() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let order = layers(&src);
    assert!(order.contains(&"train".to_owned()) && order.contains(&"utf8".to_owned()));
    let mut wrong = Vec::new();
    for module in &order {
        let mut files = Vec::new();
        let dir = src.join(module);
        if dir.is_dir() {
            rust_files(&dir, &mut files);
        } else {
            files.push(src.join(format!("{module}.rs")));
        }
        let position = order.iter().position(|m| m == module).expect("listed");
        for file in files {
            let text = std::fs::read_to_string(&file).expect("a source file");
            for imported in imports(&text) {
                let allowed = order[..position].contains(&imported) || imported == *module;
                if !allowed {
                    wrong.push(format!("{} imports {imported}", file.display()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the layers of src/lib.rs:\n{}", wrong.join("\n"));
}
