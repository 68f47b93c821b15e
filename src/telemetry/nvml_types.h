/* Our own declarations of the few NVML types, constants and function
 * signatures pfi uses, so that no CUDA or NVML header is needed to build
 * (nvtop's approach). Shared by the nvml backend (which dlopens the real
 * library) and tests/fake-nvml (which implements the same symbols).
 *
 * Every value below was checked against nvml.h as shipped in NVIDIA's
 * go-nvml (pkg/nvml/nvml.h, NVML 13): enum values, struct layouts and
 * signatures. Only append; never renumber.
 */
#ifndef PFI_TELEMETRY_NVML_TYPES_H
#define PFI_TELEMETRY_NVML_TYPES_H

typedef int nvmlReturn_t; /* an enum in nvml.h; int-sized */

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_MEMORY = 20,
    NVML_ERROR_NO_DATA = 21,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
    NVML_ERROR_UNKNOWN = 999,
};

/* nvmlDevice_t is a struct wrapping an opaque pointer, passed by value. */
typedef struct {
    struct nvmlDevice_st *handle;
} nvmlDevice_t;

typedef int nvmlClockType_t;
enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };

typedef int nvmlTemperatureSensors_t;
enum { NVML_TEMPERATURE_GPU = 0 };

typedef struct {
    unsigned int gpu;    /* percent */
    unsigned int memory; /* percent */
} nvmlUtilization_t;

typedef struct {
    unsigned long long total; /* bytes */
    unsigned long long free;
    unsigned long long used; /* reserved + allocated */
} nvmlMemory_t;

/* nvmlDeviceGetTemperatureV (NVML 12.x+) takes a versioned struct. */
typedef struct {
    unsigned int version;
    nvmlTemperatureSensors_t sensorType;
    int temperature;
} nvmlTemperature_v1_t;
#define NVML_TEMPERATURE_V1_VERSION ((unsigned int)(sizeof(nvmlTemperature_v1_t) | (1u << 24)))

#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96

/* Clocks event (formerly "throttle") reasons bits. */
#define NVML_CLOCKS_EVENT_GPU_IDLE 0x0000000000000001ULL
#define NVML_CLOCKS_EVENT_APP_CLOCKS 0x0000000000000002ULL
#define NVML_CLOCKS_EVENT_SW_POWER_CAP 0x0000000000000004ULL
#define NVML_CLOCKS_EVENT_HW_SLOWDOWN 0x0000000000000008ULL
#define NVML_CLOCKS_EVENT_SYNC_BOOST 0x0000000000000010ULL
#define NVML_CLOCKS_EVENT_SW_THERMAL 0x0000000000000020ULL
#define NVML_CLOCKS_EVENT_HW_THERMAL 0x0000000000000040ULL
#define NVML_CLOCKS_EVENT_HW_POWER_BRAKE 0x0000000000000080ULL
#define NVML_CLOCKS_EVENT_DISPLAY_CLOCKS 0x0000000000000100ULL

/* GPM (GPU Performance Monitoring, Hopper and newer). Metric values are
 * percent (0-100) for the *_UTIL/OCCUPANCY ids and MiB/s for the rates. */
enum {
    NVML_GPM_METRIC_SM_UTIL = 2,
    NVML_GPM_METRIC_SM_OCCUPANCY = 3,
    NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5,
    NVML_GPM_METRIC_DRAM_BW_UTIL = 10,
    NVML_GPM_METRIC_PCIE_TX_PER_SEC = 20,
    NVML_GPM_METRIC_PCIE_RX_PER_SEC = 21,
    NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC = 60,
    NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC = 61,
    /* The size of metrics[] below. NVML 12.0 had 98 here; the library reads
     * only numMetrics entries, so a larger array than an older driver expects
     * is harmless, and this matches the newest header. */
    NVML_GPM_METRIC_MAX = 333,
};

typedef struct {
    struct nvmlGpmSample_st *handle;
} nvmlGpmSample_t;

typedef struct {
    char *shortName;
    char *longName;
    char *unit;
} nvmlGpmMetricMetricInfo_t;

typedef struct {
    unsigned int metricId;   /* IN */
    nvmlReturn_t nvmlReturn; /* OUT: value valid only when NVML_SUCCESS */
    double value;            /* OUT */
    nvmlGpmMetricMetricInfo_t metricInfo;
} nvmlGpmMetric_t;

typedef struct {
    unsigned int version;    /* IN: NVML_GPM_METRICS_GET_VERSION */
    unsigned int numMetrics; /* IN */
    nvmlGpmSample_t sample1; /* IN: the earlier sample */
    nvmlGpmSample_t sample2; /* IN: the later sample */
    nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;
#define NVML_GPM_METRICS_GET_VERSION 1

typedef struct {
    unsigned int version; /* IN: NVML_GPM_SUPPORT_VERSION */
    unsigned int isSupportedDevice;
} nvmlGpmSupport_t;
#define NVML_GPM_SUPPORT_VERSION 1

typedef enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 } nvmlEnableState_t;

/* The layouts NVML expects on LP64 Linux (nvml.h's field order and types);
 * a mistake here would corrupt memory inside the driver library. */
_Static_assert(sizeof(nvmlDevice_t) == sizeof(void *), "nvmlDevice_t is one pointer");
_Static_assert(sizeof(nvmlUtilization_t) == 8, "nvmlUtilization_t: two unsigned ints");
_Static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t: three unsigned long longs");
_Static_assert(sizeof(nvmlTemperature_v1_t) == 12, "nvmlTemperature_v1_t");
_Static_assert(sizeof(nvmlGpmSupport_t) == 8, "nvmlGpmSupport_t");
_Static_assert(sizeof(nvmlGpmMetric_t) == 16 + 3 * sizeof(char *), "nvmlGpmMetric_t");
_Static_assert(__builtin_offsetof(nvmlGpmMetricsGet_t, metrics) == 8 + 2 * sizeof(void *),
               "nvmlGpmMetricsGet_t header: version, numMetrics, two sample handles");

/* Function pointer types, one per symbol used. */
typedef nvmlReturn_t (*nvmlInit_v2_fn)(void);
typedef nvmlReturn_t (*nvmlShutdown_fn)(void);
typedef const char *(*nvmlErrorString_fn)(nvmlReturn_t);
typedef nvmlReturn_t (*nvmlDeviceGetCount_v2_fn)(unsigned int *);
typedef nvmlReturn_t (*nvmlDeviceGetHandleByIndex_v2_fn)(unsigned int, nvmlDevice_t *);
typedef nvmlReturn_t (*nvmlDeviceGetString_fn)(nvmlDevice_t, char *, unsigned int);
typedef nvmlReturn_t (*nvmlDeviceGetUInt_fn)(nvmlDevice_t, unsigned int *);
typedef nvmlReturn_t (*nvmlDeviceGetULL_fn)(nvmlDevice_t, unsigned long long *);
typedef nvmlReturn_t (*nvmlDeviceGetPowerManagementLimitConstraints_fn)(nvmlDevice_t,
                                                                        unsigned int *,
                                                                        unsigned int *);
typedef nvmlReturn_t (*nvmlDeviceGetClockInfo_fn)(nvmlDevice_t, nvmlClockType_t, unsigned int *);
typedef nvmlReturn_t (*nvmlDeviceGetUtilizationRates_fn)(nvmlDevice_t, nvmlUtilization_t *);
typedef nvmlReturn_t (*nvmlDeviceGetTemperature_fn)(nvmlDevice_t, nvmlTemperatureSensors_t,
                                                    unsigned int *);
typedef nvmlReturn_t (*nvmlDeviceGetTemperatureV_fn)(nvmlDevice_t, nvmlTemperature_v1_t *);
typedef nvmlReturn_t (*nvmlDeviceGetMemoryInfo_fn)(nvmlDevice_t, nvmlMemory_t *);
typedef nvmlReturn_t (*nvmlDeviceSetPowerManagementLimit_fn)(nvmlDevice_t, unsigned int);
typedef nvmlReturn_t (*nvmlDeviceGetPersistenceMode_fn)(nvmlDevice_t, nvmlEnableState_t *);
typedef nvmlReturn_t (*nvmlGpmQueryDeviceSupport_fn)(nvmlDevice_t, nvmlGpmSupport_t *);
typedef nvmlReturn_t (*nvmlGpmSampleAlloc_fn)(nvmlGpmSample_t *);
typedef nvmlReturn_t (*nvmlGpmSampleFree_fn)(nvmlGpmSample_t);
typedef nvmlReturn_t (*nvmlGpmSampleGet_fn)(nvmlDevice_t, nvmlGpmSample_t);
typedef nvmlReturn_t (*nvmlGpmMetricsGet_fn)(nvmlGpmMetricsGet_t *);

#endif
