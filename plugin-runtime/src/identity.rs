//! Resource identity (tfplugin6 6.9, Terraform and OpenTofu 1.12+): a small object, stored
//! beside the state, that names the remote object a resource instance stands for.
//!
//! The engine keeps it and checks that it never changes over the object's life, and an
//! `import { identity = {...} }` block hands it back instead of an import id. A resource
//! declares an [`IdentitySchema`] and derives its identity from its state (see
//! [`crate::Resource::identity`]); this runtime encodes it on every read, plan, apply and
//! import, and only when it is wholly known, since the engine refuses unknown identities.

use crate::types::Type;

/// The attributes of one resource type's identity, and their schema version.
#[derive(Clone, Debug)]
pub struct IdentitySchema {
    /// Bumped when the identity's shape changes.
    pub version: i64,
    /// Its attributes.
    pub attributes: Vec<IdentityAttribute>,
}

/// One attribute of an identity. Identities hold only primitives and lists.
#[derive(Clone, Debug)]
pub struct IdentityAttribute {
    /// Its name in `identity = { ... }`.
    pub name: &'static str,
    /// Its type: a primitive or a list of them.
    pub ty: Type,
    /// An `import { identity = ... }` block must set it.
    pub required_for_import: bool,
    /// Markdown.
    pub description: &'static str,
}

impl IdentityAttribute {
    /// An attribute an import by identity must give.
    pub fn required(name: &'static str, ty: Type, description: &'static str) -> IdentityAttribute {
        IdentityAttribute {
            name,
            ty,
            required_for_import: true,
            description,
        }
    }

    /// An attribute an import by identity may leave out.
    pub fn optional(name: &'static str, ty: Type, description: &'static str) -> IdentityAttribute {
        IdentityAttribute {
            name,
            ty,
            required_for_import: false,
            description,
        }
    }
}

impl IdentitySchema {
    /// The object type identity values have.
    pub fn value_type(&self) -> Type {
        Type::object(self.attributes.iter().map(|a| (a.name, a.ty.clone())))
    }
}
