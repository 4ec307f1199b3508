# R's own numbers for the data sets of tests/core/test_analyze_statistics.py, which compares them with
# agent/analyze/results/statistics.py. Usage: Rscript analyze_statistics.R IN_DIR OUT.json
# IN_DIR holds long CSVs (participant, condition, position, value), items.csv and pvalues.csv.
suppressPackageStartupMessages({
  library(jsonlite)
  library(lme4)
  library(lmerTest)
  library(psych)
})
args <- commandArgs(trailingOnly = TRUE)
dir <- args[1]
read_long <- function(name) {
  d <- read.csv(file.path(dir, paste0(name, ".csv")), stringsAsFactors = FALSE)
  d$participant <- as.character(d$participant)
  # treatment coding against the first condition in byte order, as the Python side sorts
  d$condition <- factor(d$condition, levels = sort(unique(d$condition), method = "radix"))
  d
}
pair_of <- function(d, a, b) {
  w <- reshape(d[, c("participant", "condition", "value")], idvar = "participant",
               timevar = "condition", direction = "wide")
  w <- w[complete.cases(w[, paste0("value.", c(a, b))]), ]
  list(a = w[[paste0("value.", a)]], b = w[[paste0("value.", b)]])
}
htest <- function(t) {
  out <- list(statistic = unname(t$statistic), p = t$p.value)
  if (!is.null(t$parameter)) out$df <- unname(t$parameter)
  if (!is.null(t$conf.int)) out$ci <- as.numeric(t$conf.int)
  if (!is.null(t$estimate)) out$estimate <- unname(t$estimate)
  out
}
# The rank-biserial r from R's V: (R+ - R-) / (R+ + R-) over the non-zero differences.
rank_biserial_paired <- function(x, y) {
  d <- x - y
  m <- sum(d != 0)
  v <- unname(wilcox.test(x, y, paired = TRUE, exact = FALSE)$statistic)
  2 * v / (m * (m + 1) / 2) - 1
}
# The noncentral-F interval of partial eta squared (Steiger 2004), written out with R's pf.
eta_interval <- function(f, df1, df2) {
  ncp_at <- function(q) {
    g <- function(l) pf(f, df1, df2, ncp = l) - q
    if (g(0) <= 0) return(0)
    hi <- max(10, 2 * f * df1)
    while (g(hi) > 0) hi <- hi * 2
    uniroot(g, c(0, hi), tol = 1e-12)$root
  }
  lo <- ncp_at(0.975); up <- ncp_at(0.025)
  c(lo / (lo + df1 + df2 + 1), up / (up + df1 + df2 + 1))
}
res <- list()

for (name in c("paired_ties", "paired_exact")) {
  d <- read_long(name)
  p <- pair_of(d, "A", "B")
  exact <- name == "paired_exact"
  res[[name]] <- list(
    n = length(p$a),
    wilcoxon = htest(wilcox.test(p$a, p$b, paired = TRUE, exact = exact, correct = TRUE)),
    rank_biserial = rank_biserial_paired(p$a, p$b),
    t = htest(t.test(p$a, p$b, paired = TRUE))
  )
}

d <- read_long("repeated")
w <- reshape(d[, c("participant", "condition", "value")], idvar = "participant",
             timevar = "condition", direction = "wide")
w <- w[complete.cases(w), ]
m <- as.matrix(w[, paste0("value.", levels(d$condition))])
fr <- friedman.test(m)
dd <- d[d$participant %in% w$participant, ]
dd$participant <- factor(dd$participant)
s <- summary(aov(value ~ condition + Error(participant / condition), data = dd))
tab <- s[["Error: participant:condition"]][[1]]
f <- tab[1, "F value"]; df1 <- tab[1, "Df"]; df2 <- tab[2, "Df"]
res$repeated <- list(
  n = nrow(m),
  friedman = c(htest(fr), list(w = unname(fr$statistic) / (nrow(m) * (ncol(m) - 1)))),
  anova = list(statistic = f, df = df1, df2 = df2, p = tab[1, "Pr(>F)"],
               eta = tab[1, "Sum Sq"] / (tab[1, "Sum Sq"] + tab[2, "Sum Sq"]),
               ci = eta_interval(f, df1, df2))
)

for (name in c("mixed", "mixed_boundary")) {
  d <- read_long(name)
  fit <- suppressMessages(lmerTest::lmer(value ~ condition + position + (1 | participant), data = d, REML = TRUE))
  co <- summary(fit)$coefficients
  terms <- list()
  for (r in rownames(co)[-1]) {
    key <- if (r == "position") "position" else paste0("condition: ", sub("^condition", "", r))
    est <- co[r, "Estimate"]; se <- co[r, "Std. Error"]; tv <- co[r, "t value"]
    terms[[key]] <- list(estimate = est, se = se, z = tv, p_wald = 2 * pnorm(-abs(tv)),
                         ci = c(est - qnorm(0.975) * se, est + qnorm(0.975) * se),
                         df_satterthwaite = co[r, "df"], p_satterthwaite = co[r, "Pr(>|t|)"])
  }
  res[[name]] <- list(n = length(unique(d$participant)), terms = terms, singular = isSingular(fit))
}

for (name in c("between_ties", "between_exact")) {
  d <- read_long(name)
  x <- d$value[d$condition == "A"]; y <- d$value[d$condition == "B"]
  mw <- wilcox.test(x, y, exact = name == "between_exact", correct = TRUE)
  res[[name]] <- list(
    mann_whitney = c(htest(mw), list(r = 2 * unname(mw$statistic) / (length(x) * length(y)) - 1)),
    welch = htest(t.test(x, y, var.equal = FALSE)),
    kruskal = htest(kruskal.test(value ~ condition, data = d)),
    n = nrow(d)
  )
}

items <- read.csv(file.path(dir, "items.csv"))
keys <- ifelse(grepl("_reversed$", names(items)), -1, 1)
a <- psych::alpha(items, keys = keys, warnings = FALSE)
res$items <- list(
  n = nrow(items),
  alpha = a$total$raw_alpha,
  ci = c(a$feldt$lower.ci$raw_alpha, a$feldt$upper.ci$raw_alpha),
  r_drop = setNames(as.list(a$item.stats$r.drop), sub("-$", "", rownames(a$item.stats)))
)

ps <- read.csv(file.path(dir, "pvalues.csv"))$p
res$adjust <- list(holm = p.adjust(ps, "holm"), bonferroni = p.adjust(ps, "bonferroni"),
                   fdr_bh = p.adjust(ps, "BH"))

write_json(res, args[2], digits = NA, auto_unbox = TRUE)
