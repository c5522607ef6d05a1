import elicitkit

EXPECTED = [
    "Accepted",
    "Ask",
    "BodyLimits",
    "Cancelled",
    "ClientOverride",
    "Declined",
    "Elicitation",
    "ElicitationClientError",
    "ElicitationError",
    "ElicitationNotSupported",
    "ElicitationResult",
    "ElicitationTimeout",
    "ElicitationVetoed",
    "Fallback",
    "FallbackHandler",
    "InvalidElicitationContent",
    "Outcome",
    "PageIdentity",
    "PendingQuestion",
    "Problem",
    "QuestionInfo",
    "SERVER_DEFAULT",
    "SchemaError",
    "StageEvent",
    "StoreUnavailable",
    "TamperedRecord",
    "Timeout",
    "Titles",
]


def test_the_public_api_is_exactly_the_sorted_all_list() -> None:
    assert elicitkit.__all__ == EXPECTED
    assert sorted(elicitkit.__all__) == elicitkit.__all__


def test_every_public_name_is_importable_from_the_package() -> None:
    for name in elicitkit.__all__:
        assert getattr(elicitkit, name) is not None


def test_every_error_shares_the_one_root() -> None:
    for name in elicitkit.__all__:
        obj = getattr(elicitkit, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, elicitkit.ElicitationError)


def test_importing_the_package_has_no_side_effects_on_logging() -> None:
    import logging

    assert logging.getLogger("elicitkit").handlers == []


def test_implementation_modules_are_private() -> None:
    import pkgutil

    public = sorted(m.name for m in pkgutil.iter_modules(elicitkit.__path__) if not m.name.startswith("_"))
    assert public == ["channels", "compat", "fastmcp", "shell", "stores", "testing"]


def test_the_shell_api_is_the_folder_server_and_the_sdk_path() -> None:
    import elicitkit.shell

    assert elicitkit.shell.__all__ == ["FolderError", "ShellTool", "add_shell_tools", "sdk_path"]
    assert elicitkit.shell.sdk_path().is_file()


def test_the_frontmcp_compat_api_is_its_sorted_all_list() -> None:
    import elicitkit.compat.frontmcp as frontmcp

    assert frontmcp.__all__ == [
        "DEFAULT_ELICIT_TTL",
        "STAGES",
        "ElicitResult",
        "ElicitStatus",
        "ElicitationEncryptionError",
        "ElicitationError",
        "ElicitationNotSupportedError",
        "ElicitationSubscriptionError",
        "ElicitationTimeoutError",
        "InvalidInputError",
        "supports_elicitation",
    ]
    for name in frontmcp.__all__:
        obj = getattr(frontmcp, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, elicitkit.ElicitationError)
