"""The reviewer's pages: the list, an item's pages, their forms (from JSON Schema), drafts and what each kind shows."""
