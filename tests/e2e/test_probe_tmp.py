def test_probe(tensorboard_server, browser, screenshot):
    browser.get(tensorboard_server.plugin_url())
    import time; time.sleep(5)
    print(screenshot("home"))
    open("/tmp/e2e_probe/page.html","w").write(browser.page_source)
    print(tensorboard_server.get_json("/data/plugins_listing"))
