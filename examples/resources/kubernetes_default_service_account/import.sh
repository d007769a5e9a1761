# kubernetes_default_service_account cannot be imported: it edits an object without owning it and claims only the fields
# it sets. Declare it and apply.
