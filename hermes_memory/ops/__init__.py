"""Operations on a whole memory home: forget (GDPR erasure), export/import, backup/restore."""


__all__: list[str] = []
