// libmicrohttpd, for the metrics endpoint, plus two calls Swift cannot make itself:
// MHD_start_daemon is variadic, and a response is made, queued and released in one step.
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <microhttpd.h>

// Serves on `listen_fd` (bound and listening already) from one internal thread that
// polls; at most `connection_limit` connections at once, each closed after
// `timeout_seconds` without activity, so a slow or idle client cannot pin the server.
static inline struct MHD_Daemon *logbook_metrics_start(
    int listen_fd, MHD_AccessHandlerCallback handler, void *context, unsigned int connection_limit,
    unsigned int timeout_seconds) {
    return MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, NULL, NULL, handler, context,
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_fd,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
        MHD_OPTION_END);
}

// Queues `length` bytes of `body` (copied) with this status and content type.
static inline enum MHD_Result logbook_metrics_respond(
    struct MHD_Connection *connection, unsigned int status, const char *content_type, const void *body,
    size_t length) {
    struct MHD_Response *response =
        MHD_create_response_from_buffer(length, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (response == NULL) return MHD_NO;
    if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type) == MHD_NO) {
        MHD_destroy_response(response);
        return MHD_NO;
    }
    enum MHD_Result queued = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return queued;
}
