"""The OpenAPI 3.1 description of the service (served at /openapi.json)."""

from __future__ import annotations

from typing import Any

from bytebpe import __version__


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}}


_ERRORS = {
    "400": {"description": "Bad input: malformed JSON, a wrong type, an unknown field, an "
                           "unknown token id; `error.field` names the field",
            **_json(_ref("Error"))},
    "408": {"description": "The request took longer than the configured timeout",
            **_json(_ref("Error"))},
    "409": {"description": "The pinned `version` cannot be served any more",
            **_json(_ref("Error"))},
    "413": {"description": "The body, a batch or a text is over the configured limits",
            **_json(_ref("Error"))},
}

_VERSION_HEADER = {"X-Bytebpe-Vocab-Version": {
    "description": "The vocabulary version that served this request",
    "schema": {"type": "string"}}}

_SPECIAL = {"oneOf": [{"const": "all"}, {"type": "array", "items": {"type": "string"}}]}
_VERSION = {"type": "string", "pattern": "^[0-9]+-[0-9a-f]{16}$",
            "description": "Pin a vocabulary version seen earlier: `<merges>-<hash>`. An "
                           "earlier prefix of a growing run store is served exactly; a version "
                           "that cannot be served gets 409."}
_TEXTS = {"text": {"type": "string"}, "texts": {"type": "array", "items": {"type": "string"}}}


def openapi_document() -> dict[str, Any]:
    encode_common = {
        **_TEXTS,
        "allowed_special": {**_SPECIAL, "description": "special tokens encoded as their id"},
        "disallowed_special": {**_SPECIAL, "default": "all",
                               "description": "special tokens whose text is an error (400)"},
        "version": _VERSION,
    }
    piece = {"oneOf": [{"type": "string"}, {"type": "object", "properties": {
        "hex": {"type": "string"}}, "required": ["hex"]}]}
    schemas = {
        "Error": {"type": "object", "properties": {"error": {
            "type": "object", "required": ["code", "message", "field"],
            "properties": {"code": {"type": "string"}, "message": {"type": "string"},
                           "field": {"type": ["string", "null"]}}}}},
        "TokenizeRequest": {"type": "object", "additionalProperties": False, "properties": {
            **encode_common,
            "return_pieces": {"type": "boolean", "description": "each token's text, or "
                              "{\"hex\": ...} where its bytes are not valid UTF-8"},
            "return_offsets": {"type": "boolean", "description": "each token's [start, end) "
                               "byte offsets in the text's UTF-8"},
        }},
        "TokenizeResponse": {"type": "object", "required": ["ids", "version", "vocab_size"],
                             "properties": {
            "ids": {"oneOf": [{"type": "array", "items": {"type": "integer"}},
                              {"type": "array", "items": {"type": "array",
                                                          "items": {"type": "integer"}}}]},
            "pieces": {"type": "array", "items": {"oneOf": [piece, {"type": "array",
                                                                    "items": piece}]}},
            "offsets": {"type": "array"},
            "version": {"type": "string"}, "vocab_size": {"type": "integer"}}},
        "CountRequest": {"type": "object", "additionalProperties": False,
                         "properties": encode_common},
        "CountResponse": {"type": "object", "properties": {
            "count": {"type": "integer"}, "counts": {"type": "array", "items": {"type": "integer"}},
            "total": {"type": "integer"}, "version": {"type": "string"},
            "vocab_size": {"type": "integer"}}},
        "DetokenizeRequest": {"type": "object", "additionalProperties": False,
                              "required": ["ids"], "properties": {
            "ids": {"oneOf": [{"type": "array", "items": {"type": "integer"}},
                              {"type": "array", "items": {"type": "array",
                                                          "items": {"type": "integer"}}}]},
            "errors": {"enum": ["strict", "replace", "ignore"], "default": "strict"},
            "version": _VERSION}},
        "DetokenizeResponse": {"type": "object", "properties": {
            "text": {"type": "string"}, "texts": {"type": "array", "items": {"type": "string"}},
            "version": {"type": "string"}, "vocab_size": {"type": "integer"}}},
        "Vocab": {"type": "object", "properties": {
            "version": {"type": "string"}, "merges": {"type": "integer"},
            "sha256": {"type": "string"}, "vocab_size": {"type": "integer"},
            "pattern": {"type": "string"}, "pattern_name": {"type": ["string", "null"]},
            "special_tokens": {"type": "object", "additionalProperties": {"type": "integer"}},
            "kind": {"type": "string"}, "loaded_at": {"type": "number"}}},
        "Reload": {"type": "object", "properties": {
            "result": {"enum": ["success", "unchanged", "failure"]},
            "version": {"type": "string"}, "previous": {"type": "string"},
            "seconds": {"type": "number"}, "error": {"type": ["string", "null"]}}},
    }

    def post(summary: str, request: str, response: str) -> dict[str, Any]:
        return {"post": {"summary": summary, "requestBody": {"required": True,
                                                             **_json(_ref(request))},
                         "responses": {"200": {"description": "OK", "headers": _VERSION_HEADER,
                                               **_json(_ref(response))}, **_ERRORS}}}

    return {
        "openapi": "3.1.0",
        "info": {"title": "bytebpe tokenizer service", "version": __version__},
        "paths": {
            "/v1/tokenize": post("Encode one text or a list of texts", "TokenizeRequest",
                                 "TokenizeResponse"),
            "/v1/count": post("Count the tokens of one text or a list", "CountRequest",
                              "CountResponse"),
            "/v1/detokenize": post("Decode ids or a list of id lists", "DetokenizeRequest",
                                   "DetokenizeResponse"),
            "/v1/vocab": {"get": {"summary": "The vocabulary serving now", "responses": {
                "200": {"description": "OK", "headers": _VERSION_HEADER, **_json(_ref("Vocab"))}}}},
            "/v1/admin/reload": {"post": {
                "summary": "Reload the vocabulary now (needs the admin token)",
                "security": [{"bearer": []}],
                "responses": {"200": {"description": "Reloaded or unchanged",
                                      **_json(_ref("Reload"))},
                              "401": {"description": "No token", **_json(_ref("Error"))},
                              "403": {"description": "Wrong token", **_json(_ref("Error"))},
                              "404": {"description": "Admin endpoints are off",
                                      **_json(_ref("Error"))},
                              "409": {"description": "The reload failed; the old vocabulary "
                                                     "serves on", **_json(_ref("Reload"))}}}},
            "/healthz": {"get": {"summary": "The process answers",
                                 "responses": {"200": {"description": "OK"}}}},
            "/readyz": {"get": {"summary": "A vocabulary is loaded and serving",
                                "responses": {"200": {"description": "OK"}}}},
            "/metrics": {"get": {"summary": "Prometheus metrics (text exposition)",
                                 "responses": {"200": {"description": "OK"}}}},
        },
        "components": {"schemas": schemas, "securitySchemes": {
            "bearer": {"type": "http", "scheme": "bearer"}}},
    }
