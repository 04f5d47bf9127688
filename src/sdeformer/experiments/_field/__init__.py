"""The field's 2026 results as registered experiments (docs/field.md), one module each: ``long-context``
(Bruno, Chen, Lin, Polyanskiy, Rigollet 2026), ``independent-noise`` (Mun, Rosenzweig 2026) and
``context-chaos`` (Chen, Lin, Liu, Rigollet 2026); ``sdeformer reproduce field`` runs them all."""
