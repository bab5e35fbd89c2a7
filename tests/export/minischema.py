# SPDX-License-Identifier: MIT
"""A small JSON Schema (draft-07 subset) validator, stdlib only, for the
export tests. Supports $ref (local), anyOf, oneOf, const, enum, type,
properties, required, additionalProperties, items, minimum, minItems and the
annotation keywords; any other keyword is an error, so a schema can never be
half-checked silently."""

ANNOTATIONS = {"$schema", "$id", "title", "description", "definitions", "$comment"}
TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _resolve(root, ref):
    if not ref.startswith("#/"):
        raise ValueError(f"unsupported $ref {ref}")
    node = root
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def errors(instance, schema, root=None, path="$"):
    """List of error strings (empty when valid)."""
    root = schema if root is None else root
    out = []
    for key, val in schema.items():
        if key in ANNOTATIONS:
            continue
        if key == "$ref":
            out += errors(instance, _resolve(root, val), root, path)
        elif key == "type":
            kinds = val if isinstance(val, list) else [val]
            if not any(TYPES[k](instance) for k in kinds):
                out.append(f"{path}: expected {val}, got {type(instance).__name__}")
        elif key == "const":
            if instance != val or type(instance) is not type(val):
                out.append(f"{path}: expected const {val!r}")
        elif key == "enum":
            if instance not in val:
                out.append(f"{path}: {instance!r} not in {val}")
        elif key == "anyOf":
            if all(errors(instance, s, root, path) for s in val):
                out.append(f"{path}: matches none of anyOf")
        elif key == "oneOf":
            if sum(not errors(instance, s, root, path) for s in val) != 1:
                out.append(f"{path}: does not match exactly one of oneOf")
        elif key == "properties":
            if isinstance(instance, dict):
                for name, sub in val.items():
                    if name in instance:
                        out += errors(instance[name], sub, root, f"{path}.{name}")
        elif key == "required":
            if isinstance(instance, dict):
                out += [f"{path}: missing {name}" for name in val if name not in instance]
        elif key == "additionalProperties":
            if isinstance(instance, dict):
                known = schema.get("properties", {})
                for name in instance:
                    if name in known:
                        continue
                    if val is False:
                        out.append(f"{path}: unexpected property {name}")
                    elif isinstance(val, dict):
                        out += errors(instance[name], val, root, f"{path}.{name}")
        elif key == "items":
            if isinstance(instance, list):
                for i, item in enumerate(instance):
                    out += errors(item, val, root, f"{path}[{i}]")
        elif key == "minimum":
            if TYPES["number"](instance) and instance < val:
                out.append(f"{path}: {instance} < minimum {val}")
        elif key == "minItems":
            if isinstance(instance, list) and len(instance) < val:
                out.append(f"{path}: fewer than {val} items")
        else:
            raise ValueError(f"unsupported schema keyword {key!r} at {path}")
        if len(out) > 20:
            break
    return out
