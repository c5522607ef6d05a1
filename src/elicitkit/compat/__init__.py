"""Names other elicitation libraries use, for code moving to elicitkit.

`elicitkit.compat.frontmcp` holds FrontMCP's. Each name is elicitkit's own
class or function under another name, so both spellings can be mixed while
code moves over.
"""

__all__: list[str] = []
