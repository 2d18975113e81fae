// Lighthouse (mobile preset) on the login page and a signed-in user's dashboard of a running gateway, in Debian's
// Chromium: accessibility, best practices and performance, with the machine's benchmark index (a report, not a test).
// Usage: node run.mjs BASE_URL USERNAME PASSWORD
import lighthouse from 'lighthouse';
import puppeteer from 'puppeteer-core';

const [base, username, password] = process.argv.slice(2);
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const CATEGORIES = ['accessibility', 'best-practices', 'performance'];

const browser = await puppeteer.launch({
  executablePath: CHROMIUM, headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
});
const page = await browser.newPage();

async function audit(path) {
  const flags = { onlyCategories: CATEGORIES, formFactor: 'mobile', disableStorageReset: true, logLevel: 'error' };
  const { lhr } = await lighthouse(`${base}${path}`, flags, undefined, page);
  const score = (id) => Math.round(lhr.categories[id].score * 100);
  console.log(`${path}  accessibility ${score('accessibility')}  best-practices ${score('best-practices')}  `
    + `performance ${score('performance')}  benchmark-index ${lhr.environment.benchmarkIndex}`);
  for (const id of CATEGORIES) {
    for (const ref of lhr.categories[id].auditRefs) {
      const result = lhr.audits[ref.id];
      if (ref.weight > 0 && result.score !== null && result.score < 1 && id !== 'performance') {
        console.log(`    ${id}: ${ref.id} (${result.title})`);
      }
    }
  }
  for (const metric of ['first-contentful-paint', 'largest-contentful-paint', 'total-blocking-time', 'cumulative-layout-shift']) {
    console.log(`    ${metric}: ${lhr.audits[metric].displayValue}`);
  }
}

await audit('/login');
await page.goto(`${base}/login`);
await page.type('input[name=username]', username);
await page.type('input[name=password]', password);
await Promise.all([page.waitForSelector('[data-testid=user-menu]'), page.click('[data-testid=login-submit]')]);
await audit('/detail');
await browser.close();
