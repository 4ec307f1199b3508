"""A study's results: its analysis plan run on the study's data, the statistics, and the page that shows them."""
