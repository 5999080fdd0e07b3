/// The texts of ``ReasonCatalog/standard``. Keys are described on ``ReasonCatalog``.
///
/// Every table has exactly the English table's keys, with the same `{seconds}` placeholders
/// (a test checks it).
enum BuiltInReasons {
  /// Used when no locale, not even English, has a text for any key of an error.
  static let lastResort = "Something went wrong. Please try again."

  static let english: [String: String] = [
    "notReachable": "You seem to be offline. Check your network connection.",
    "timedOut": "The server took too long to respond.",
    "cancelled": "The request was cancelled.",
    "cannotConnect": "Could not connect to the server. Please try again later.",
    "cannotFindHost": "The server could not be found. Check your network connection.",
    "connectionLost": "The network connection was lost. Please try again.",
    "secureConnectionFailed": "A secure connection to the server could not be made.",
    "httpStatus": "The server could not complete the request.",
    "business": "The request could not be completed.",
    "decoding": "The server sent a response the app could not read.",
    "invalidRequest":
      "The app could not make this request. Please update the app or contact support.",
    "bodyTooLarge": "The data is too large to handle.",
    "corruptBody": "The data arrived damaged. Please try again.",
    "badResponse": "The server sent an invalid response.",
    "transport": "A network error occurred. Please try again.",
    "middleware": "The app could not complete the request.",
    "authenticationFailed": "Your session has expired. Please sign in again.",
    "http.400": "The server did not accept the request.",
    "http.401": "Your session has expired. Please sign in again.",
    "http.403": "You don't have permission to do this.",
    "http.404": "The requested content could not be found.",
    "http.408": "The server took too long to respond.",
    "http.413": "The data you sent is too large.",
    "http.429": "Too many requests. Please wait a moment and try again.",
    "http.429.retryAfter": "Too many requests. Please try again in {seconds} seconds.",
    "http.504": "The server took too long to respond.",
    "http.4xx": "The server could not complete the request.",
    "http.5xx": "The server is busy. Please try again later.",
  ]

  static let simplifiedChinese: [String: String] = [
    "notReachable": "您连接的网络不正常，请检查您的网络连接",
    "timedOut": "服务器连接超时",
    "cancelled": "请求已取消",
    "cannotConnect": "无法连接到服务器，请稍后重试",
    "cannotFindHost": "找不到服务器，请检查您的网络连接",
    "connectionLost": "网络连接已断开，请重试",
    "secureConnectionFailed": "无法与服务器建立安全连接",
    "httpStatus": "服务器无法完成请求",
    "business": "请求未能完成",
    "decoding": "服务器返回的数据无法解析",
    "invalidRequest": "无法发起该请求，请更新应用或联系客服",
    "bodyTooLarge": "数据过大，无法处理",
    "corruptBody": "数据已损坏，请重试",
    "badResponse": "服务器返回了无效的响应",
    "transport": "网络错误，请重试",
    "middleware": "应用无法完成该请求",
    "authenticationFailed": "登录已过期，请重新登录",
    "http.400": "服务器未接受该请求",
    "http.401": "登录已过期，请重新登录",
    "http.403": "您没有权限执行此操作",
    "http.404": "请求的内容不存在",
    "http.408": "服务器连接超时",
    "http.413": "发送的数据过大",
    "http.429": "请求过于频繁，请稍后再试",
    "http.429.retryAfter": "请求过于频繁，请在 {seconds} 秒后重试",
    "http.504": "服务器连接超时",
    "http.4xx": "服务器无法完成请求",
    "http.5xx": "服务器繁忙，请稍后再试",
  ]

  /// Traditional Chinese, in Taiwan's usage (網路, 伺服器, 連線, 資料), which Hong Kong and
  /// Macau readers also read naturally in app interfaces.
  static let traditionalChinese: [String: String] = [
    "notReachable": "網路連線異常，請檢查您的網路連線",
    "timedOut": "伺服器回應逾時",
    "cancelled": "請求已取消",
    "cannotConnect": "無法連線至伺服器，請稍後再試",
    "cannotFindHost": "找不到伺服器，請檢查您的網路連線",
    "connectionLost": "網路連線已中斷，請再試一次",
    "secureConnectionFailed": "無法與伺服器建立安全連線",
    "httpStatus": "伺服器無法完成此請求",
    "business": "無法完成此請求",
    "decoding": "無法讀取伺服器傳回的資料",
    "invalidRequest": "應用程式無法送出此請求，請更新應用程式或聯絡客服",
    "bodyTooLarge": "資料過大，無法處理",
    "corruptBody": "資料已損毀，請再試一次",
    "badResponse": "伺服器傳回了無效的回應",
    "transport": "網路發生錯誤，請再試一次",
    "middleware": "應用程式無法完成此請求",
    "authenticationFailed": "登入已過期，請重新登入",
    "http.400": "伺服器不接受此請求",
    "http.401": "登入已過期，請重新登入",
    "http.403": "您沒有執行此操作的權限",
    "http.404": "找不到您要的內容",
    "http.408": "伺服器回應逾時",
    "http.413": "傳送的資料過大",
    "http.429": "請求過於頻繁，請稍後再試",
    "http.429.retryAfter": "請求過於頻繁，請於 {seconds} 秒後再試",
    "http.504": "伺服器回應逾時",
    "http.4xx": "伺服器無法完成此請求",
    "http.5xx": "伺服器忙碌中，請稍後再試",
  ]
}
