/* Matching the same job across GPU generations (paper Table 8): a group's
 * name with its platform blanked, so "Dense PT H200x8 (M)" and
 * "Dense PT H100x8 (M)" share the key "Dense PT *x8 (M)". Shared by
 * `pfi compare` and the report's Table 8.
 */
#ifndef PFI_GROUP_KEY_H
#define PFI_GROUP_KEY_H

/* name with every occurrence of platform replaced by "*" (platform NULL or
 * "" leaves it as is); malloc'd, the caller frees it; NULL when out of
 * memory or name is NULL. */
char *pfi_group_key(const char *name, const char *platform);

#endif
