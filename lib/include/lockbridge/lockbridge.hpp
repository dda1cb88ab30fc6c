// lockbridge: everything public in one include.
#pragma once

#include "lockbridge/client.hpp"
#include "lockbridge/deadline.hpp"
#include "lockbridge/error.hpp"
#include "lockbridge/latch.hpp"
#include "lockbridge/leased_semaphore.hpp"
#include "lockbridge/legacy_value.hpp"
#include "lockbridge/lock_keys.hpp"
#include "lockbridge/multi_mutex.hpp"
#include "lockbridge/mutex.hpp"
#include "lockbridge/observer.hpp"
#include "lockbridge/semaphore.hpp"
#include "lockbridge/shared_mutex.hpp"
#include "lockbridge/stripes.hpp"
#include "lockbridge/url.hpp"
#include "lockbridge/version.hpp"
