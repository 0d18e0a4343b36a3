"""The webgpu backend's page: what `rgpu build --backend webgpu` writes under
target/rgpu/web/ (page.py), and how `rgpu run --backend webgpu` runs it in headless
Chromium (serve.py, browser.py)."""
