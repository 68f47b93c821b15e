/* Kubernetes' view of a node, decoded (pfi/k8s.h): the PodResources List
 * reply (hand-encoded protobuf, with fields pfid does not read), the gRPC
 * frame, the PodList's labels and annotations, and the pod labels of a real
 * dcgm-exporter page. */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#include "pfi/fileio.h"
#include "pfi/k8s.h"
#include "pfi/prom.h"

/* A minimal protobuf writer for the test's messages: a length-delimited
 * field is (tag, varint length, bytes), a varint field (tag, varint). */
typedef struct {
    uint8_t b[4096];
    size_t n;
} pb;

static void varint(pb *p, uint64_t v)
{
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        p->b[p->n++] = (uint8_t)(c | (v ? 0x80 : 0));
    } while (v);
}

static void bytes(pb *p, unsigned field, const void *d, size_t len)
{
    varint(p, (uint64_t)field << 3 | 2);
    varint(p, len);
    memcpy(p->b + p->n, d, len);
    p->n += len;
}

static void str(pb *p, unsigned field, const char *s)
{
    bytes(p, field, s, strlen(s));
}

static void sub(pb *p, unsigned field, const pb *m)
{
    bytes(p, field, m->b, m->n);
}

/* ContainerDevices{resource_name, device_ids...} */
static pb devices(const char *res, const char *a, const char *b)
{
    pb d = {0};
    str(&d, 1, res);
    str(&d, 2, a);
    if (b) str(&d, 2, b);
    pb topo = {0}, numa = {0};
    varint(&numa, 1 << 3 | 0); /* NUMANode.ID = 1 */
    varint(&numa, 1);
    sub(&topo, 1, &numa);
    sub(&d, 3, &topo);
    return d;
}

static pb list_reply(void)
{
    pb c1 = {0}, p1 = {0}, c2 = {0}, p2 = {0}, r = {0};
    str(&c1, 1, "trainer");
    pb d = devices("nvidia.com/gpu", "GPU-aaaa", "GPU-bbbb");
    sub(&c1, 2, &d);
    d = devices("example.com/nic", "eth1", NULL); /* not a GPU: left out */
    sub(&c1, 2, &d);
    varint(&c1, 3 << 3 | 0); /* cpu_ids */
    varint(&c1, 7);
    pb mem = {0};
    str(&mem, 1, "memory"); /* ContainerMemory (field 4): not in pfi's proto */
    sub(&c1, 4, &mem);
    str(&p1, 1, "llama-w-0-0");
    str(&p1, 2, "team");
    sub(&p1, 3, &c1);
    str(&c2, 1, "side");
    d = devices("nvidia.com/mig-1g.10gb", "MIG-cccc", NULL);
    sub(&c2, 2, &d);
    str(&p2, 1, "tts");
    str(&p2, 2, "serving");
    sub(&p2, 3, &c2);
    sub(&r, 1, &p1);
    sub(&r, 1, &p2);
    pb nameless = {0}; /* a pod without a name is not a kubelet's: skipped */
    str(&nameless, 2, "x");
    sub(&r, 1, &nameless);
    return r;
}

static void test_decode(void **state)
{
    pb r = list_reply();
    pfi_k8s_gpu *v;
    size_t n;
    pfi_error err;
    int rc = pfi_k8s_podresources_decode(r.b, r.n, &v, &n, &err);
    if (rc == PFI_ENOTSUP) skip(); /* built without protobuf-c */
    assert_int_equal(rc, PFI_OK);
    assert_int_equal(n, 3);
    assert_string_equal(v[0].ns, "team");
    assert_string_equal(v[0].pod, "llama-w-0-0");
    assert_string_equal(v[0].container, "trainer");
    assert_string_equal(v[0].device, "GPU-aaaa");
    assert_int_equal(v[0].index, -1);
    assert_string_equal(v[1].device, "GPU-bbbb");
    assert_string_equal(v[2].ns, "serving");
    assert_string_equal(v[2].device, "MIG-cccc");
    free(v);
    /* an empty reply is no pods; a truncated one is an error */
    assert_int_equal(pfi_k8s_podresources_decode(r.b, 0, &v, &n, &err), PFI_OK);
    assert_int_equal(n, 0);
    free(v);
    assert_int_equal(pfi_k8s_podresources_decode(r.b, r.n - 3, &v, &n, &err), PFI_EPARSE);
    assert_null(v);
}

static void test_unframe(void **state)
{
    const uint8_t *m;
    size_t ml;
    pfi_error err;
    uint8_t f[8] = {0, 0, 0, 0, 3, 'a', 'b', 'c'};
    assert_int_equal(pfi_k8s_grpc_unframe(f, 8, &m, &ml, &err), PFI_OK);
    assert_ptr_equal(m, f + 5);
    assert_int_equal(ml, 3);
    assert_int_equal(pfi_k8s_grpc_unframe(f, 7, &m, &ml, &err), PFI_EPARSE); /* short */
    assert_int_equal(pfi_k8s_grpc_unframe(f, 4, &m, &ml, &err), PFI_EPARSE); /* no header */
    f[0] = 1;
    assert_int_equal(pfi_k8s_grpc_unframe(f, 8, &m, &ml, &err), PFI_EPARSE); /* compressed */
    assert_non_null(strstr(err.msg, "compressed"));
    uint8_t big[5] = {0, 0x7f, 0xff, 0xff, 0xff};
    assert_int_equal(pfi_k8s_grpc_unframe(big, 5, &m, &ml, &err), PFI_EPARSE);
    assert_true(pfi_k8s_gpu_resource("nvidia.com/gpu"));
    assert_true(pfi_k8s_gpu_resource("nvidia.com/gpu.shared"));
    assert_true(pfi_k8s_gpu_resource("nvidia.com/mig-3g.40gb"));
    assert_false(pfi_k8s_gpu_resource("nvidia.com/gpus"));
    assert_false(pfi_k8s_gpu_resource("amd.com/gpu"));
}

static const char *podlist =
    "{\"kind\":\"PodList\",\"items\":["
    "{\"metadata\":{\"name\":\"llama-w-1-0-x\",\"namespace\":\"team\",\"labels\":{"
    "\"batch.kubernetes.io/job-name\":\"llama-w-1\",\"jobset.sigs.k8s.io/jobset-name\":\"llama\","
    "\"pfi.io/class\":\"moe-ft\",\"pfi.io/job-class\":\"llama-70b\"},\"annotations\":{\"pfi.io/"
    "sla-floor\":\"0.75\","
    "\"pfi.io/exempt\":\"true\"}},\"status\":{\"phase\":\"Running\"}},"
    "{\"metadata\":{\"name\":\"eval-1\",\"namespace\":\"team\",\"labels\":{"
    "\"batch.kubernetes.io/job-name\":\"eval\",\"pfi.io/class\":\"dense\","
    "\"pfi.io/job-class\":\"a/b\"},"
    "\"annotations\":{\"pfi.io/sla-floor\":\"0\"}},\"status\":{\"phase\":\"Succeeded\"}},"
    "{\"metadata\":{\"name\":\"solo\",\"namespace\":\"ml\",\"labels\":{\"ray.io/cluster\":\"\","
    "\"pfi.io/class\":\"big-pt\"}}},"
    "{\"metadata\":{\"namespace\":\"ml\"}}]}";

static void test_pod_list(void **state)
{
    pfi_k8s_pod *v;
    size_t n;
    pfi_error err;
    assert_int_equal(pfi_k8s_pod_list_parse(podlist, strlen(podlist), NULL, &v, &n, &err), PFI_OK);
    assert_int_equal(n, 3); /* the nameless one is skipped */
    /* JobSet before the child Job's name */
    assert_string_equal(v[0].job, "team:llama");
    assert_true(v[0].sla_floor == 0.75);
    assert_int_equal(v[0].exempt, 1);
    assert_string_equal(v[0].arch, "moe");
    assert_string_equal(v[0].task, "ft");
    assert_string_equal(v[0].job_class, "llama-70b"); /* pfi.io/job-class */
    assert_int_equal(v[0].ended, 0);
    assert_string_equal(v[1].job, "team:eval");
    assert_true(v[1].sla_floor == 0); /* 0 is not a floor: said, ignored */
    assert_non_null(strstr(v[1].warning, "pfi.io/sla-floor"));
    assert_string_equal(v[1].arch, "dense");
    assert_string_equal(v[1].task, "");
    assert_string_equal(v[1].job_class, ""); /* '/' is not a class's: ignored */
    assert_int_equal(v[1].ended, 1);
    /* an empty group label is none: the pod is its own job */
    assert_string_equal(v[2].job, "ml:solo");
    assert_string_equal(v[2].arch, "");
    assert_non_null(strstr(v[2].warning, "pfi.io/class"));
    free(v);
    /* the keys are configurable */
    const char *const mine[] = {"batch.kubernetes.io/job-name", NULL};
    assert_int_equal(pfi_k8s_pod_list_parse(podlist, strlen(podlist), mine, &v, &n, &err), PFI_OK);
    assert_string_equal(v[0].job, "team:llama-w-1");
    free(v);
    assert_int_equal(
        pfi_k8s_pod_list_parse("{\"kind\":\"Pod\",\"items\":[]}", 25, NULL, &v, &n, &err),
        PFI_EPARSE);
    assert_int_equal(pfi_k8s_pod_list_parse("[", 1, NULL, &v, &n, &err), PFI_EPARSE);
}

static void test_job_id(void **state)
{
    char id[129], ns[64], name[80];
    assert_int_equal(pfi_k8s_job_id("team", "llama", "p", id, sizeof id), 1);
    assert_string_equal(id, "team:llama");
    assert_int_equal(pfi_k8s_job_id("team", NULL, "p-0", id, sizeof id), 1);
    assert_string_equal(id, "team:p-0");
    /* Kubernetes' longest namespace and label value fit: 63 + 1 + 63 */
    memset(ns, 'n', 63);
    ns[63] = '\0';
    memset(name, 'v', 64);
    name[64] = '\0';
    assert_int_equal(pfi_k8s_job_id(ns, name, "p", id, sizeof id), 1);
    assert_int_equal(strlen(id), 128);
    name[64] = 'v';
    name[65] = '\0';
    assert_int_equal(pfi_k8s_job_id(ns, name, "p", id, sizeof id), 0);
    assert_string_equal(id, "");
}

/* The real MIG page: two pods on GPU 0's instances 7 and 9, instance 8 idle. */
static void test_dcgm_page(void **state)
{
    char *buf;
    size_t len;
    pfi_error err;
    assert_int_equal(pfi_file_read_all(PFI_SHARED_DIR
                                       "/data/dcgm-exporter/issue512_h100_mig_metrics_excerpt.prom",
                                       &buf, &len, &err),
                     PFI_OK);
    pfi_prom_doc *d;
    assert_int_equal(pfi_prom_parse(buf, len, "page", &d, &err), PFI_OK);
    pfi_k8s_gpu *v;
    size_t n;
    assert_int_equal(pfi_k8s_gpus_from_prom(d, &v, &n, &err), PFI_OK);
    assert_int_equal(n, 2);
    assert_string_equal(v[0].ns, "model-playground-stg");
    assert_string_equal(v[0].pod, "text-embedding-predictor-00008-deployment-57946f6c67-vdtjl");
    assert_string_equal(v[0].container, "kserve-container");
    assert_string_equal(v[0].device, "GPU-58e8f5ea-13cc-013a-d88f-2bcf5ae8bc77#7");
    assert_int_equal(v[0].index, 0);
    assert_string_equal(v[1].pod, "tts-predictor-00011-deployment-5554f75554-8j8pl");
    assert_string_equal(v[1].device, "GPU-58e8f5ea-13cc-013a-d88f-2bcf5ae8bc77#9");
    free(v);
    pfi_prom_doc_destroy(d);
    /* every field repeats the labels: still one entry per pod and GPU */
    const char *two = "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"GPU-x\",pod=\"p\",namespace="
                      "\"n\",container=\"c\"} 300\n"
                      "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-x\",pod=\"p\",namespace=\"n\","
                      "container=\"c\"} 90\n"
                      "DCGM_FI_DEV_GPU_UTIL{gpu=\"2\",UUID=\"GPU-y\",pod=\"\",namespace=\"\"} 0\n";
    assert_int_equal(pfi_prom_parse(two, strlen(two), "two", &d, &err), PFI_OK);
    assert_int_equal(pfi_k8s_gpus_from_prom(d, &v, &n, &err), PFI_OK);
    assert_int_equal(n, 1);
    assert_string_equal(v[0].device, "GPU-x");
    assert_int_equal(v[0].index, 1);
    free(v);
    pfi_prom_doc_destroy(d);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode),    cmocka_unit_test(test_unframe),
        cmocka_unit_test(test_pod_list),  cmocka_unit_test(test_job_id),
        cmocka_unit_test(test_dcgm_page),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
