"""Text of Markdown table cells."""


def markdown_cell(text):
    """A table cell's text with its ``|`` escaped and line breaks as spaces.

    A feature name or label such as ``alcohol|%vol`` written as given opens a cell of its own,
    which the table drops (or shifts the cells after it).

    Parameters
    ----------
    text : object
        Written as ``str(text)``.

    Returns
    -------
    cell : str
    """
    return " ".join(str(text).replace("|", "\\|").splitlines())
