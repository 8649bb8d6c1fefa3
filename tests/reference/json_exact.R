## Helper sourced by the reference scripts: write JSON with full double
## precision.
##
## jsonlite::write_json(..., digits = NA) writes only 15 significant digits
## (checked with jsonlite 1.8.4: 1/3 -> 0.333333333333333, and digits = I(17)
## gives the same), which does NOT round-trip doubles exactly.  We therefore
## format every double with sprintf("%.17g") ourselves and hand the text to
## jsonlite verbatim (class "json", json_verbatim = TRUE).  Non-finite values
## become null.  Names of numeric vectors are dropped.  Length-1 vectors
## become scalars (as with auto_unbox = TRUE).

exact_numbers <- function(x) {
  if (is.list(x)) {
    nm <- names(x)
    x <- lapply(x, exact_numbers)
    names(x) <- nm
    return(x)
  }
  if (is.double(x)) {
    if (!is.null(dim(x))) stop("exact_numbers: convert matrices to lists of vectors first")
    txt <- ifelse(is.finite(x), sprintf("%.17g", x), "null")
    if (length(x) == 1 && !inherits(x, "AsIs")) return(structure(txt, class = "json"))
    return(structure(paste0("[", paste(txt, collapse = ", "), "]"), class = "json"))
  }
  x
}

write_json_exact <- function(x, path) {
  jsonlite::write_json(exact_numbers(x), path, auto_unbox = TRUE, pretty = TRUE,
                       json_verbatim = TRUE, digits = NA)
}
