// The tab's title: what is shown ("TEST-001 · huddle") after the count of what waits on a
// person ("(2) TEST-001 · huddle"), so a person sees it from another tab.

let base = 'huddle';
let waiting = 0;

/** What the tab shows, without the count. */
export function setTitle(text) {
  base = text;
  apply();
}

/** How many questions wait on a person. */
export function setWaiting(count) {
  waiting = count;
  apply();
}

function apply() {
  const text = waiting > 0 ? `(${waiting}) ${base}` : base;
  if (document.title !== text) document.title = text;
}
