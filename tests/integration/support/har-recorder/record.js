// Records a HAR file of headless Chromium loading a page: the DevTools protocol's Network and
// Page events, turned into HAR 1.2 by chrome-har. Chromium has no flag that writes a HAR.
//
// node record.js URL OUT.har   (NODE_PATH must hold puppeteer-core and chrome-har; tests/run
// installs them). The page signals it is done by setting document.title to "done".
'use strict';
const puppeteer = require('puppeteer-core');
const { harFromMessages } = require('chrome-har');

const [url, out] = process.argv.slice(2);
if (!url || !out) {
  console.error('usage: node record.js URL OUT.har');
  process.exit(2);
}

(async () => {
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-extensions'],
  });
  try {
    const page = await browser.newPage();
    const cdp = await page.createCDPSession();
    const events = [];
    const wanted = [
      'Page.loadEventFired', 'Page.domContentEventFired', 'Page.frameStartedLoading',
      'Page.frameAttached', 'Page.frameScheduledNavigation',
      'Network.requestWillBeSent', 'Network.requestServedFromCache', 'Network.dataReceived',
      'Network.responseReceived', 'Network.resourceChangedPriority', 'Network.loadingFinished',
      'Network.loadingFailed', 'Network.requestWillBeSentExtraInfo',
      'Network.responseReceivedExtraInfo',
    ];
    for (const method of wanted) {
      cdp.on(method, (params) => events.push({ method, params }));
    }
    await cdp.send('Page.enable');
    await cdp.send('Network.enable');
    await page.goto(url, { waitUntil: 'load', timeout: 20000 });
    await page.waitForFunction(() => document.title === 'done', { timeout: 20000 });
    // The last responses' loadingFinished events may come after the page's own code ran:
    // wait (bounded) until every request sent has finished or failed.
    const pending = () => {
      const open = new Set();
      for (const e of events) {
        if (e.method === 'Network.requestWillBeSent') open.add(e.params.requestId);
        if (e.method === 'Network.loadingFinished' || e.method === 'Network.loadingFailed') {
          open.delete(e.params.requestId);
        }
      }
      return open.size;
    };
    for (let i = 0; i < 200 && pending() > 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const har = harFromMessages(events, { includeTextFromResponseBody: false });
    require('fs').writeFileSync(out, JSON.stringify(har, null, 2));
  } finally {
    await browser.close();
  }
})().catch((e) => {
  console.error(String(e && e.stack || e));
  process.exit(1);
});
