"""The one error a strict decode raises. Cold path.

A :class:`ProjectionError` names the governed subject (its IRI), the property at fault
(a compact name such as ``aegis:regex``) and what is wrong, so an operator can find the
triple and fix it. It fails the whole refresh; the prior cache keeps serving.
"""

from __future__ import annotations


class ProjectionError(Exception):
    """A governed item the strict decoder refuses.

    ``subject`` is the subject's IRI (or a blank-node label when the store gave one),
    ``property`` the compact property name (``aegis:regex``, ``rdfs:label``, ``rdf:type``),
    ``message`` a sentence saying what is wrong and what is allowed.
    """

    def __init__(self, subject: str, property: str, message: str) -> None:
        super().__init__(f"{subject}: {property}: {message}")
        self.subject = subject
        self.property = property
        self.message = message
