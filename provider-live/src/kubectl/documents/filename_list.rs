//! `kubectl_filename_list`: the files a glob matches and their base names.

use async_trait::async_trait;
use plugin_runtime::{
    Attribute, Block, DataSource, Diagnostics, ReadDataRequest, ReadDataResponse, Schema, Type, Value,
};

use super::glob::base;
use super::{diags, matches, sha256_hex, text};

pub struct FilenameList;

#[async_trait]
impl DataSource for FilenameList {
    fn type_name(&self) -> &'static str {
        "kubectl_filename_list"
    }

    fn schema(&self) -> Schema {
        let block = Block::new("The files a glob pattern matches.")
            .attribute(Attribute::computed(
                "id",
                Type::String,
                "The SHA-256, in hex, of each match's index followed by its path, all concatenated.",
            ))
            .attribute(Attribute::required(
                "pattern",
                Type::String,
                "A Go filepath.Glob pattern (`*` stays within a folder), relative to the working directory.",
            ))
            .attribute(Attribute::computed(
                "matches",
                Type::list(Type::String),
                "The matched paths, sorted.",
            ))
            .attribute(Attribute::computed(
                "basenames",
                Type::list(Type::String),
                "The last element of each match.",
            ));
        Schema::new(0, block)
    }

    async fn read(&self, req: ReadDataRequest) -> Result<ReadDataResponse, Diagnostics> {
        let pattern = text(&req.config, "pattern");
        let found = matches(pattern).map_err(diags)?;
        // gavinbunney's and alekc v2's id (`<index><path>` concatenated), not alekc v3's
        // (`<index>:<length>:<path>` lines): the data source is read anew at every plan, so the id
        // only has to be stable, and most states come from those two.
        let id: String = found
            .iter()
            .enumerate()
            .map(|(i, path)| format!("{i}{path}"))
            .collect();
        let list = |items: Vec<String>| Value::List(items.into_iter().map(Value::String).collect());
        let state = Value::object([
            ("id", Value::string(sha256_hex(id))),
            ("pattern", Value::string(pattern)),
            ("basenames", list(found.iter().map(|p| base(p)).collect())),
            ("matches", list(found)),
        ]);
        Ok(ReadDataResponse {
            state,
            diagnostics: Diagnostics::new(),
        })
    }
}
