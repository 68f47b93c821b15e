/* Stands in for a layer that has no code yet (CMake needs a source). */
typedef int pfi_empty_unit;
