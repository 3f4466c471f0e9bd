// The one source of a precompiled-header host target (cmake/precompiled_headers.cmake): empty,
// so that the host builds the header and nothing else.
