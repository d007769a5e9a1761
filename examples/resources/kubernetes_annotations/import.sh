# kubernetes_annotations cannot be imported: it edits an object without owning it and claims only the fields
# it sets. Declare it and apply (with `force = true` to take over fields another field manager owns).
