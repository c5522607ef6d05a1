"""Schemas: Python types to MCP's restricted form schema, the subset check, and answer validation."""

from elicitkit._schema.choices import choices_of, options_of
from elicitkit._schema.compile import FormSchema, Titles, compile_schema, raw_form
from elicitkit._schema.restricted import check_raw_schema
from elicitkit._schema.validate import authored, check_content, problems_in, to_data
from elicitkit._schema.values import check_value

__all__ = [
    "FormSchema",
    "Titles",
    "authored",
    "check_content",
    "check_raw_schema",
    "check_value",
    "choices_of",
    "compile_schema",
    "options_of",
    "problems_in",
    "raw_form",
    "to_data",
]
