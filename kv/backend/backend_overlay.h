/*
** kv/backend/backend_overlay.h: a transaction's own writes read on the client, over a backend that
** cannot read them (no KV_BE_EXT_OVERLAY: HBase, the row-atomic test backend). An adapter
** backend: every operation goes to the backend under it, except that a scan or get whose
** kv_scan_options.overlay holds ops for what it reads merges them into the backend's rows
** itself, as Phoenix merges a connection's uncommitted mutations on the client: the
** backend's rows (read without the overlay, the filter and the limit) and the overlay's
** rows are merged by key, each row's cells taken from the committed row and then the
** overlay's ops in batch order under kv/kv.h's visibility rules (a tombstone masks the
** cells below it with ts <= T, a put replaces one at an equal timestamp, the newest
** timestamp wins, KV_TS_NOW is the backend's clock at open), and the filter and the limit
** applied to the merged rows.
**
** The merge is exact for what SQL reads: one version per column. A read with overlay ops
** that needs more is refused (KV_ERR_INVALID, "... is not supported by backend NAME"):
** max_versions above 1, a time range or as_of, a DELETE_VERSION op (it would uncover a
** version the backend did not hand out), a resume key. A family's TTL hides merged cells past it (the clock
** being the backend's at open).
**
** Not here: the backend under it; the executor's paths for other missing capabilities
** (exec/backend_caps.h).
*/
#ifndef ROWAN_KV_BACKEND_OVERLAY_H
#define ROWAN_KV_BACKEND_OVERLAY_H

#include "kv/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Open the adapter over *in (not owned: it must outlive the adapter). Its caps are in's
** plus KV_BE_EXT_OVERLAY, its name in's; its local store in's. KV_OK, KV_MISUSE (NULL
** argument) or KV_ERR_NOMEM (*out NULL then). */
int kv_backend_overlay_open(kv_backend *in, kv_backend **out);
/* Free an adapter of kv_backend_overlay_open (NULL: nothing). */
void kv_backend_overlay_close(kv_backend *be);

#ifdef __cplusplus
}
#endif
#endif /* ROWAN_KV_BACKEND_OVERLAY_H */
