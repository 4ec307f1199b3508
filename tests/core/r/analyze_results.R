# R's own numbers for a results page (python -m agent.analyze --study S --results OUT), computed from the
# data the page analysed; tests/core/test_analyze_results_against_r.py compares them with the page's CSVs.
# Usage: Rscript analyze_results.R IN_DIR OUT.json
# IN_DIR holds analysed.csv (participant, condition, position, outcome, value: the page's own file),
# items_<scale>.csv (participant, condition, one column per scored item) and plan.json (the conditions in
# the study's order, the primary and secondary outcomes, the pairs compared, the control, alpha, the
# correction). Within-subject designs only (the example study's).
suppressPackageStartupMessages({
  library(jsonlite)
  library(lme4)
  library(psych)
})
args <- commandArgs(trailingOnly = TRUE)
dir <- args[1]
plan <- fromJSON(file.path(dir, "plan.json"), simplifyVector = TRUE)
conditions <- plan$conditions
analysed <- read.csv(file.path(dir, "analysed.csv"), stringsAsFactors = FALSE,
                     colClasses = c(participant = "character", condition = "character"))
num <- function(x) if (length(x) == 0 || is.na(x) || !is.finite(x)) NULL else unname(x)
of <- function(outcome) analysed[analysed$outcome == outcome, ]
wide <- function(d) {
  w <- reshape(d[, c("participant", "condition", "value")], idvar = "participant", timevar = "condition",
               direction = "wide")
  for (c in conditions) if (is.null(w[[paste0("value.", c)]])) w[[paste0("value.", c)]] <- NA_real_
  w
}

# --- descriptives: n, mean, SD, median, quartiles (type 7, R's default)
descriptives <- list()
for (outcome in c(plan$primary, plan$secondary)) {
  d <- of(outcome)
  for (c in conditions) {
    x <- d$value[d$condition == c]
    q <- if (length(x)) quantile(x, c(0.25, 0.5, 0.75), type = 7, names = FALSE) else c(NA, NA, NA)
    descriptives[[length(descriptives) + 1]] <- list(
      outcome = outcome, condition = c, n = length(x), mean = num(mean(x)),
      sd = if (length(x) > 1) sd(x) else NULL, median = num(q[2]), q1 = num(q[1]), q3 = num(q[3]),
      iqr = num(q[3] - q[1]))
  }
}

# --- the declared tests
# Wilcoxon signed-rank, a - b: exact below 50 differences with no zero and no tie, otherwise the normal
# approximation with the continuity correction (the statistics module's choice, stated in paired.py).
wilcoxon <- function(d, a, b) {
  w <- wide(d)
  x <- w[[paste0("value.", a)]]; y <- w[[paste0("value.", b)]]
  keep <- !is.na(x) & !is.na(y)
  x <- x[keep]; y <- y[keep]
  diff <- x - y
  nz <- diff[diff != 0]
  if (length(diff) < 3) return(list(n = length(diff), note = "fewer than 3 pairs"))
  if (length(nz) == 0) return(list(n = length(diff), note = "no difference to test"))
  exact <- length(nz) < 50 && length(nz) == length(diff) && !any(duplicated(abs(nz)))
  t <- suppressWarnings(wilcox.test(x, y, paired = TRUE, exact = exact, correct = TRUE))
  v <- unname(t$statistic); m <- length(nz)
  list(n = length(diff), statistic = v, p = t$p.value, estimate = 2 * v / (m * (m + 1) / 2) - 1, exact = exact)
}
friedman <- function(d) {
  w <- wide(d)
  m <- as.matrix(w[, paste0("value.", conditions)])
  m <- m[complete.cases(m), , drop = FALSE]
  if (nrow(m) < 3) return(list(n = nrow(m), note = "fewer than 3 complete participants"))
  if (all(apply(m, 1, function(r) length(unique(r)) == 1))) return(list(n = nrow(m), note = "no variance"))
  t <- friedman.test(m)
  list(n = nrow(m), statistic = unname(t$statistic), df = unname(t$parameter), p = t$p.value,
       estimate = unname(t$statistic) / (nrow(m) * (ncol(m) - 1)))
}
# value ~ condition + position + (1 | participant) by REML, the control the reference level; Wald z,
# its normal p-value and interval (the statistics module's; lmerTest's Satterthwaite t is another test).
mixed <- function(d, control) {
  d$condition <- factor(d$condition, levels = c(control, setdiff(conditions, control)))
  n <- length(unique(d$participant))
  terms <- c(paste0("condition: ", setdiff(conditions, control)), "position")
  none <- function(why) setNames(lapply(terms, function(t) list(n = n, note = why)), terms)
  if (length(unique(d$value)) == 1) return(none("no variance"))
  fit <- tryCatch(suppressMessages(suppressWarnings(
    lmer(value ~ condition + position + (1 | participant), data = d, REML = TRUE))),
    error = function(e) conditionMessage(e))
  if (is.character(fit)) return(none(fit))
  co <- summary(fit)$coefficients
  out <- list()
  for (r in rownames(co)[-1]) {
    key <- if (r == "position") "position" else paste0("condition: ", sub("^condition", "", r))
    est <- co[r, "Estimate"]; se <- co[r, "Std. Error"]; z <- co[r, "t value"]
    out[[key]] <- list(estimate = est, se = se, statistic = z, p = 2 * pnorm(-abs(z)),
                       ci_low = est - qnorm(0.975) * se, ci_high = est + qnorm(0.975) * se,
                       n = n, singular = isSingular(fit))
  }
  out
}
adjust <- c(holm = "holm", bonferroni = "bonferroni", fdr_bh = "BH", none = "none")[[plan$correction]]
tests <- list()
for (family in c("primary", "secondary")) {
  outcomes <- plan[[family]]
  if (length(outcomes) == 0) next
  pairwise <- list()
  for (outcome in outcomes) {
    for (i in seq_len(nrow(plan$pairs))) {
      a <- plan$pairs[i, 1]; b <- plan$pairs[i, 2]
      pairwise[[length(pairwise) + 1]] <- c(list(outcome = outcome, family = family, test = "wilcoxon",
                                                 comparison = paste(a, "vs", b)), wilcoxon(of(outcome), a, b))
    }
  }
  # a test not run has no p-value and is no member of the family (p.adjust counts the others)
  corrected <- p.adjust(sapply(pairwise, function(t) if (is.null(t$p)) NA else t$p), adjust)
  for (i in seq_along(pairwise)) {
    if (is.na(corrected[i])) next
    pairwise[[i]]$p_corrected <- corrected[i]
    pairwise[[i]]$significant <- corrected[i] < plan$alpha
  }
  for (outcome in outcomes) {
    tests <- c(tests, Filter(function(t) t$outcome == outcome, pairwise))
    if (length(conditions) > 2) {
      f <- friedman(of(outcome))
      if (is.null(f$note)) f$significant <- f$p < plan$alpha
      tests[[length(tests) + 1]] <- c(list(outcome = outcome, family = family, test = "friedman",
                                           comparison = "all"), f)
    }
    terms <- mixed(of(outcome), plan$control)
    for (term in names(terms)) {
      tests[[length(tests) + 1]] <- c(list(outcome = outcome, family = family, test = "mixed_model",
                                           comparison = term), terms[[term]])
    }
  }
}

# --- each scale's reliability (items already scored: no key reverses them again) and its score
reliability <- list()
scores <- list()
for (scale in plan$scales) {
  d <- read.csv(file.path(dir, paste0("items_", scale, ".csv")), stringsAsFactors = FALSE, check.names = FALSE,
                colClasses = c(participant = "character", condition = "character"))
  items <- d[, setdiff(names(d), c("participant", "condition")), drop = FALSE]
  items <- items[complete.cases(items), , drop = FALSE]
  entry <- list(n = nrow(items), k = ncol(items))
  if (ncol(items) >= 2) {
    a <- suppressWarnings(suppressMessages(psych::alpha(items, check.keys = FALSE, warnings = FALSE)))
    entry$alpha <- a$total$raw_alpha
    entry$ci <- c(a$feldt$lower.ci$raw_alpha, a$feldt$upper.ci$raw_alpha)
    entry$r_drop <- setNames(as.list(a$item.stats$r.drop), rownames(a$item.stats))
  }
  reliability[[scale]] <- entry
  # the page's value of a scale outcome is the mean of its scored items
  if (scale %in% analysed$outcome) {
    key <- paste(d$participant, d$condition)
    o <- of(scale)
    mine <- setNames(rowMeans(d[, names(items), drop = FALSE]), key)
    scores[[scale]] <- list(rows = nrow(o), matched = sum(paste(o$participant, o$condition) %in% key),
                            max_difference = max(abs(o$value - mine[paste(o$participant, o$condition)])))
  }
}

write_json(list(descriptives = descriptives, tests = tests, reliability = reliability, scores = scores,
                r_version = R.version.string, lme4 = as.character(packageVersion("lme4")),
                psych = as.character(packageVersion("psych"))),
           args[2], digits = NA, auto_unbox = TRUE, null = "null", na = "null")
