"""GitHub Actions: the workflow `rgpu ci init` writes (`workflow`, `source`: where CI
installs rgpu from), the helpers its jobs call (`check`: ptxas over the manifest), and
rgpu's output under Actions (`diagnostics`: annotations, `summary`: the step summary)."""
