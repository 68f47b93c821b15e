/* Where an agent sits when the topology's leaves list node names: its pfid
 * says its name (GET /v1/node, "node"), asked once it answers and again a
 * minute later while that fails (an older pfid answers 404). An agent whose
 * name no leaf lists is counted in the root: it is still under the site's
 * limit, and a new node must not stop the controller; the log says so. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_internal.h"

#define ASK_AGAIN_S 60.0

void ctl_topo_place(ctl *c, double now)
{
    ctl_topo *T = &c->topo;
    if (!T->t || pfi_topo_member_kind_of(T->t) != PFI_TOPO_NODES) return;
    size_t n = 0, na = pfi_agents_count(c->agents);
    size_t *who = malloc((na + 1) * sizeof *who);
    const char **paths = malloc((na + 1) * sizeof *paths);
    long *st = malloc((na + 1) * sizeof *st);
    char **body = malloc((na + 1) * sizeof *body);
    size_t *len = malloc((na + 1) * sizeof *len);
    if (!who || !paths || !st || !body || !len) goto out;
    for (size_t a = 0; a < na && a < T->n_ag; a++)
        if (!T->placed[a] && pfi_agents_get(c->agents, a)->up && now >= T->next_ask[a]) {
            who[n] = a;
            paths[n++] = "/v1/node";
        }
    if (!n) goto out;
    pfi_agents_get_many(c->agents, who, paths, n, st, body, len);
    for (size_t i = 0; i < n; i++) {
        size_t a = who[i];
        const char *url = pfi_agents_get(c->agents, a)->url;
        json_t *o = st[i] == 200 ? json_loadb(body[i], len[i], 0, NULL) : NULL;
        const json_t *nm = json_object_get(o, "node");
        if (!json_is_string(nm)) {
            pfi_log("agent %s: GET /v1/node: %s; counted in the root until it says its name", url,
                    st[i] ? "no \"node\" in the answer" : "no answer");
            T->next_ask[a] = now + ASK_AGAIN_S;
        } else {
            size_t leaf = pfi_topo_leaf_of(T->t, json_string_value(nm));
            T->placed[a] = 1;
            T->leaf[a] = leaf == PFI_TOPO_NONE ? 0 : leaf;
            if (leaf == PFI_TOPO_NONE)
                pfi_log("agent %s: node %s is in no leaf of the topology: counted in the root "
                        "(%s)",
                        url, json_string_value(nm), ctl_topo_name(T, 0));
            else
                pfi_log("agent %s: node %s in %s", url, json_string_value(nm),
                        ctl_topo_name(T, leaf));
        }
        json_decref(o);
        free(body[i]);
    }
out:
    free(who);
    free(paths);
    free(st);
    free(body);
    free(len);
}
